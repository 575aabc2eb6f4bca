"""`RunOptions`: what `mcpdi run` was asked for, with every combination checked in one place.

The command line's flags become one frozen record (`RunOptions.from_args`), which refuses what
cannot work before anything is imported or bound, and hands `serve_http` (or `serve_sse`) its
keywords: the serving path every other way of serving takes, never options mapped by hand.
"""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from mcpdi_transport._workers import ConfigurationError

__all__ = ("RunOptions", "ServingLimits")

_SSE_REASON = (
    "an HTTP+SSE session is one event stream and the POSTs naming it, which must reach the one "
    "process holding that stream; serve HTTP+SSE with one process, or use --transport http"
)


@dataclass(frozen=True, slots=True)
class ServingLimits:
    """The limits `mcpdi run` was given; None keeps the app's own default (`build_http_app`'s)."""

    max_sessions: int | None = None
    max_sessions_per_peer: int | None = None
    session_idle_timeout: float | None = None
    max_body_size: int | None = None
    body_timeout: float | None = None
    max_buffered_bytes: int | None = None
    max_buffered_bytes_total: int | None = None
    max_pending_client_requests: int | None = None
    header_timeout: float | None = None
    timeout_keep_alive: float | None = None

    @classmethod
    def from_args(cls, arguments: argparse.Namespace) -> ServingLimits:
        return cls(**{field.name: getattr(arguments, field.name) for field in fields(cls)})

    def given(self) -> dict[str, Any]:
        """The limits set on the command line, by their `serve_http` keyword."""
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if getattr(self, field.name) is not None
        }


_HANDSHAKE_SESSION_LIMITS = ("session_idle_timeout", "max_buffered_bytes", "max_buffered_bytes_total")
"""Limits of Streamable HTTP sessions and their event buffers, which HTTP+SSE sessions do not have."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The options of `mcpdi run`; `transport` is `"stdio"`, `"http"` (also `streamable-http`) or `"sse"`."""

    target: str
    transport: Literal["stdio", "http", "sse"]
    host: str
    port: int
    path: str
    log_level: str
    reload: bool
    grace: float
    client_request_timeout: float
    allow_host: tuple[str, ...] | None
    allow_origin: tuple[str, ...] | None
    max_connections: int
    workers: int
    redis: str | None
    shared_sessions: bool
    state_keys_file: Path | None
    session_prefix: str
    loop: str
    http: str
    listen_fd: int | None
    limits: ServingLimits = ServingLimits()

    @classmethod
    def from_args(cls, arguments: argparse.Namespace) -> RunOptions:
        """The options `arguments` name; `ConfigurationError` for a combination that cannot work."""
        transport = {"stdio": "stdio", "sse": "sse"}.get(arguments.transport, "http")
        options = cls(
            target=arguments.target,
            transport=transport,  # pyright: ignore[reportArgumentType]
            host=arguments.host,
            port=arguments.port,
            path=arguments.path or ("/sse" if transport == "sse" else "/mcp"),
            log_level=arguments.log_level,
            reload=arguments.reload,
            grace=arguments.grace,
            client_request_timeout=arguments.client_request_timeout,
            allow_host=tuple(arguments.allow_host) if arguments.allow_host is not None else None,
            allow_origin=tuple(arguments.allow_origin) if arguments.allow_origin is not None else None,
            max_connections=arguments.max_connections,
            workers=arguments.workers,
            redis=arguments.redis,
            shared_sessions=arguments.shared_sessions,
            state_keys_file=arguments.state_keys_file,
            session_prefix=arguments.session_prefix,
            loop=arguments.loop,
            http=arguments.http,
            listen_fd=arguments.listen_fd,
            limits=ServingLimits.from_args(arguments),
        )
        options.check()
        return options

    def check(self) -> None:
        """Refuse, with what to do instead, every combination of options that cannot work."""
        for problem in self._problems():
            raise ConfigurationError(problem)

    def _problems(self) -> list[str]:
        problems: list[str] = []
        stdio = self.transport == "stdio"
        sse = self.transport == "sse"
        if self.reload and stdio:
            problems.append(
                "--reload needs --transport http: on stdio a restart would cut the client's stream"
            )
        if self.workers > 1:
            if stdio:
                problems.append(
                    "--workers needs --transport http: a stdio server has one client, on one pipe"
                )
            elif sse:
                problems.append(f"--workers needs --transport http: {_SSE_REASON}")
            elif self.reload:
                problems.append(
                    "--workers and --reload do not go together; reload with one process while developing"
                )
            elif self.redis is None:
                problems.append(
                    "several workers need a shared requestState replay store, or a confirmed round could be "
                    "replayed once on each of them: add --redis redis://127.0.0.1:6379/0"
                )
        if self.shared_sessions:
            if stdio:
                problems.append(
                    "--shared-sessions needs --transport http: a stdio server has one client, on one pipe"
                )
            elif sse:
                problems.append(f"--shared-sessions needs --transport http: {_SSE_REASON}")
            elif self.redis is None:
                problems.append(
                    "--shared-sessions keeps the sessions in Redis: add --redis redis://127.0.0.1:6379/0"
                )
        if sse:
            problems.extend(self._not_for_sse())
        if self.redis is not None and not _importable("redis"):
            problems.append("--redis needs the redis package: pip install 'mcpdi[redis]'")
        for module, option in ((self.loop, "--loop"), (self.http, "--http")):
            if module not in ("auto", "asyncio", "h11") and importlib.util.find_spec(module) is None:
                problems.append(f"{option} {module}: {module} is not installed; pip install 'mcpdi[fast]'")
        return problems

    def _not_for_sse(self) -> list[str]:
        given = self.limits.given()
        refused = [f"--{name.replace('_', '-')}" for name in _HANDSHAKE_SESSION_LIMITS if name in given]
        if self.session_prefix:
            refused.insert(0, "--session-prefix")
        return [
            f"{option} applies to --transport http only: an HTTP+SSE session has no session id "
            "header and no buffered events; it lives as long as its event stream"
            for option in refused
        ]

    def serve_http_keywords(self) -> dict[str, Any]:
        """The `serve_http` keywords these options name (the sessions store and socket aside);
        with `--transport sse`, those of `serve_sse`."""
        shared = {
            "log_level": self.log_level,
            "shutdown_grace": self.grace,
            "client_request_timeout": self.client_request_timeout,
            "allowed_hosts": list(self.allow_host) if self.allow_host is not None else None,
            "allowed_origins": list(self.allow_origin) if self.allow_origin is not None else None,
            "limit_concurrency": self.max_connections,
            "http": self.http,
            **self.limits.given(),
        }
        if self.transport == "sse":
            return {"sse_path": self.path, **shared}
        return {"path": self.path, **shared, "session_id_prefix": self.session_prefix}


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
