"""Entry points: `serve_http` and `serve_sse` (uvicorn on a socket bound first) and the blocking `run_server`.

This is where the MCP layer hands a server over to I/O (`Server.run`, `MCPServer.run`).
The adapters are imported inside the entry points, so stdio never loads the HTTP stack.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import math
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.abc

from mcpdi_transport._listen import ServesMCP, bind_socket, connection_cap

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpdi_transport._http._uvicorn import HttpParser

__all__ = ("EventLoop", "event_loop_options", "run_server", "serve_http", "serve_sse")

EventLoop = Literal["auto", "asyncio", "uvloop"]

logger = logging.getLogger("mcpdi_transport")

_STARTUP_TIMEOUT: Final = 30.0
_ANSWERS_AFTER_GRACE: Final = 1.0
"""Seconds after the grace for the last answers to be written and the streams to end."""
_EXIT_AFTER_ANSWERS: Final = 1.0
"""Seconds after that before a process whose calls are stuck in threads exits without them."""

SHUTDOWN_GRACE: Final = 10.0
"""Seconds running calls may finish after SIGTERM or Ctrl-C before they are answered with an error."""

MAX_CONNECTIONS: Final = 1000
"""Connections served at once; uvicorn answers more with 503."""

KEEP_ALIVE_TIMEOUT: Final = 5.0
"""Seconds an idle keep-alive connection stays open."""

HEADER_TIMEOUT: Final = 10.0
"""Seconds a client may take to send a request's headers; a slower one is disconnected."""


def event_loop_options(loop: EventLoop = "auto") -> dict[str, Any]:
    """`anyio.run` backend options for `loop`: `auto` is uvloop when it is installed (`mcpdi[fast]`).

    uvicorn's own `loop="auto"` never applies here: uvicorn is served inside the loop
    `anyio.run` starts, so the choice is made before it.
    """
    if loop == "uvloop" or (loop == "auto" and importlib.util.find_spec("uvloop") is not None):
        return {"use_uvloop": True}
    return {}


async def serve_http(
    server: ServesMCP,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "info",
    shutdown_grace: float = SHUTDOWN_GRACE,
    limit_concurrency: int = MAX_CONNECTIONS,
    timeout_keep_alive: float = KEEP_ALIVE_TIMEOUT,
    header_timeout: float = HEADER_TIMEOUT,
    http: HttpParser = "auto",
    sock: socket.socket | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **app_options: Any,
) -> None:
    """Serve `server` over Streamable HTTP with uvicorn until cancelled or interrupted.

    The socket is bound before uvicorn starts, so a taken port raises `CannotListen`
    right away; with `task_status` (`await task_group.start(serve_http, ...)`) the caller
    learns the bound port (useful with `port=0`) once the server accepts connections.
    `app_options` go to `build_http_app`. `limit_concurrency` caps open connections
    (lowered to what `ulimit -n` allows; at the cap the client that has kept the server
    waiting longest for its headers or body is disconnected, then more get 503),
    `timeout_keep_alive` closes idle ones, and a client gets
    `header_timeout` seconds to send a request's headers. `http` is the HTTP parser:
    `auto` takes httptools when it is installed (`mcpdi[fast]`), else h11. On SIGTERM or
    Ctrl-C, running calls get `shutdown_grace` seconds, then a JSON-RPC error.
    """
    from mcpdi_transport._http._app import build_http_app

    # A socket handed in is already listening (a worker process of `mcpdi run --workers`).
    sock = bind_socket(host, port) if sock is None else sock
    app = build_http_app(server, host=host, shutdown_grace=shutdown_grace, **app_options)
    serving = _Serving(log_level, shutdown_grace, limit_concurrency, timeout_keep_alive, header_timeout, http)
    await serving.serve(app, host, sock, "MCP", app_options.get("path", "/mcp"), task_status)


async def serve_sse(
    server: ServesMCP,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "info",
    shutdown_grace: float = SHUTDOWN_GRACE,
    limit_concurrency: int = MAX_CONNECTIONS,
    timeout_keep_alive: float = KEEP_ALIVE_TIMEOUT,
    header_timeout: float = HEADER_TIMEOUT,
    http: HttpParser = "auto",
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **app_options: Any,
) -> None:
    """Serve `server` over the legacy HTTP+SSE transport with uvicorn until cancelled or interrupted.

    Served as `serve_http` serves Streamable HTTP (the same socket, connection and header
    limits, and shutdown grace); `app_options` go to `build_sse_app`. One process holds a
    session's event stream, so there is no `sock=` for worker processes.
    """
    from mcpdi_transport._http._sse_transport import build_sse_app

    sock = bind_socket(host, port)
    app = build_sse_app(server, host=host, shutdown_grace=shutdown_grace, **app_options)
    serving = _Serving(log_level, shutdown_grace, limit_concurrency, timeout_keep_alive, header_timeout, http)
    await serving.serve(
        app, host, sock, "MCP over HTTP+SSE", app_options.get("sse_path", "/sse"), task_status
    )


@dataclass(frozen=True, slots=True)
class _Serving:
    """How uvicorn serves an MCP app: the limits and the shutdown grace both transports share."""

    log_level: str
    shutdown_grace: float
    limit_concurrency: int
    timeout_keep_alive: float
    header_timeout: float
    http: HttpParser

    async def serve(
        self,
        app: Starlette,
        host: str,
        sock: socket.socket,
        what: str,
        path: str,
        task_status: anyio.abc.TaskStatus[int],
    ) -> None:
        """Serve `app` (built with this grace; its state holds `mcpdi_drain`) on the listening `sock`."""
        import uvicorn  # only HTTP serving needs it

        from mcpdi_transport._http._uvicorn import (
            DrainingServer,
            RateLimitedLogs,
            header_deadline_protocol,
            serve_on_socket,
        )

        bound_port: int = sock.getsockname()[1]
        grace = self.shutdown_grace
        connections = connection_cap(self.limit_concurrency)
        if connections < self.limit_concurrency:
            logger.info(
                "the open-file limit (ulimit -n) leaves room for %d connections, not %d: serving that many",
                connections,
                self.limit_concurrency,
            )
        config = uvicorn.Config(
            app,
            log_level=self.log_level,
            lifespan="on",
            http=header_deadline_protocol(self.header_timeout, self.http),
            timeout_graceful_shutdown=math.ceil(grace + _ANSWERS_AFTER_GRACE),
            limit_concurrency=connections,
            timeout_keep_alive=math.ceil(self.timeout_keep_alive),
        )
        drain = app.state.mcpdi_drain
        uvicorn_server = DrainingServer(
            config,
            lambda: drain(grace),
            abandoned=app.state.mcpdi_abandoned,
            exit_deadline=grace + _ANSWERS_AFTER_GRACE + _EXIT_AFTER_ANSWERS,
        )
        quiet = RateLimitedLogs()
        noisy = [logging.getLogger(name) for name in ("uvicorn.error", "asyncio", "mcpdi_transport", "mcpdi")]

        def started() -> None:
            logger.info("serving %s on http://%s:%d%s", what, host, bound_port, path)
            task_status.started(bound_port)

        def stopping() -> None:
            if not uvicorn_server.should_exit:
                drain(grace)

        for noisy_logger in noisy:
            noisy_logger.addFilter(quiet)
        try:
            await serve_on_socket(uvicorn_server, sock, started=started, stopping=stopping)
        finally:
            for noisy_logger in noisy:
                noisy_logger.removeFilter(quiet)


def _stdio_serving() -> Callable[..., Awaitable[None]]:
    """`serve_stdio`, its modules and anyio's asyncio backend imported with the collector paused.

    Like mcpdi's own modules (`collector_paused`), they allocate much and free little, and a
    collection in the middle of them walks every wire model built before it again: the
    largest collection of a stdio start before its first answer.
    """
    from mcpdi.lowlevel import collector_paused

    with collector_paused():
        from mcpdi_transport._stdio import serve_stdio

        # The backend module `anyio.run` imports first; should anyio move it, `anyio.run`
        # imports its own, unpaused, and nothing else changes.
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module("anyio._backends._asyncio")
    return serve_stdio


def run_server(
    server: ServesMCP,
    transport: Literal["stdio", "streamable-http", "http", "sse"] = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    loop: EventLoop = "auto",
    **options: Any,
) -> None:
    """Serve until stdin ends (stdio) or the process is interrupted (HTTP); blocks.

    Over HTTP, `loop="auto"` runs on uvloop when it is installed (`pip install
    'mcpdi[fast]'`), and the HTTP parser is httptools then too; `loop="asyncio"` keeps the
    standard library's loop.
    """
    if transport == "stdio":
        serve_stdio = _stdio_serving()
        anyio.run(lambda: serve_stdio(server, **options))
    elif transport in ("streamable-http", "http", "sse"):
        serve = serve_sse if transport == "sse" else serve_http
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn has already shut down cleanly
            anyio.run(lambda: serve(server, host, port, **options), backend_options=event_loop_options(loop))
    else:
        msg = f"Unknown transport {transport!r}; use 'stdio', 'streamable-http' or 'sse'."
        raise ValueError(msg)
