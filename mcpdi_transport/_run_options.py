"""`RunOptions`: what `mcpdi run` was asked for, with every combination checked in one place.

The command line's flags become one frozen record (`RunOptions.from_args`), which refuses what
cannot work before anything is imported or bound, and hands `serve_http` its keywords.
"""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcpdi_transport._workers import ConfigurationError

__all__ = ("RunOptions",)


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The options of `mcpdi run`; `transport` is `"stdio"` or `"http"` (`streamable-http` is http)."""

    target: str
    transport: Literal["stdio", "http"]
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

    @classmethod
    def from_args(cls, arguments: argparse.Namespace) -> RunOptions:
        """The options `arguments` name; `ConfigurationError` for a combination that cannot work."""
        options = cls(
            target=arguments.target,
            transport="stdio" if arguments.transport == "stdio" else "http",
            host=arguments.host,
            port=arguments.port,
            path=arguments.path,
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
        if self.reload and stdio:
            problems.append(
                "--reload needs --transport http: on stdio a restart would cut the client's stream"
            )
        if self.workers > 1:
            if stdio:
                problems.append(
                    "--workers needs --transport http: a stdio server has one client, on one pipe"
                )
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
            elif self.redis is None:
                problems.append(
                    "--shared-sessions keeps the sessions in Redis: add --redis redis://127.0.0.1:6379/0"
                )
        if self.redis is not None and not _importable("redis"):
            problems.append("--redis needs the redis package: pip install 'mcpdi[redis]'")
        for module, option in ((self.loop, "--loop"), (self.http, "--http")):
            if module not in ("auto", "asyncio", "h11") and importlib.util.find_spec(module) is None:
                problems.append(f"{option} {module}: {module} is not installed; pip install 'mcpdi[fast]'")
        return problems

    def serve_http_keywords(self) -> dict[str, Any]:
        """The `serve_http` keywords these options name (the sessions store and socket aside)."""
        return {
            "log_level": self.log_level,
            "path": self.path,
            "shutdown_grace": self.grace,
            "client_request_timeout": self.client_request_timeout,
            "allowed_hosts": list(self.allow_host) if self.allow_host is not None else None,
            "allowed_origins": list(self.allow_origin) if self.allow_origin is not None else None,
            "limit_concurrency": self.max_connections,
            "session_id_prefix": self.session_prefix,
            "http": self.http,
        }


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
