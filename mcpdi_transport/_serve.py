"""Running a server: `serve_http` (uvicorn on a socket bound first) and the blocking `run_server`."""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from typing import Any, Final, Literal, Protocol

import anyio
import anyio.abc

__all__ = ("CannotListen", "ServesMCP", "bind_socket", "run_server", "serve_http")

logger = logging.getLogger("mcpdi_transport")

_STARTUP_TIMEOUT: Final = 30.0
_SHUTDOWN_GRACE: Final = 3


class ServesMCP(Protocol):
    """Anything with `running()`: the low-level `Server` and `MCPServer` both qualify."""

    def running(self) -> contextlib.AbstractAsyncContextManager[Any]: ...


class CannotListen(OSError):
    """The HTTP server could not bind its address (in use, not permitted, unknown host)."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (`port=0` picks a free one)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        msg = f"cannot listen on {host}:{port}: {error.strerror}"
        raise CannotListen(msg) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        reason = (
            "address already in use" if error.errno == errno.EADDRINUSE else (error.strerror or str(error))
        )
        msg = f"cannot listen on {host}:{port}: {reason}"
        raise CannotListen(msg) from None
    sock.setblocking(False)
    return sock


async def serve_http(
    server: ServesMCP,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "info",
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **app_options: Any,
) -> None:
    """Serve `server` over Streamable HTTP with uvicorn until cancelled or interrupted.

    The socket is bound before uvicorn starts, so a taken port raises `CannotListen`
    right away; with `task_status` (`await task_group.start(serve_http, ...)`) the caller
    learns the bound port (useful with `port=0`) once the server accepts connections.
    `app_options` go to `build_http_app`.
    """
    import uvicorn  # only HTTP serving needs it

    from mcpdi_transport._http_app import build_http_app

    sock = bind_socket(host, port)
    bound_port: int = sock.getsockname()[1]
    app = build_http_app(server, host=host, **app_options)
    config = uvicorn.Config(
        app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=_SHUTDOWN_GRACE
    )
    uvicorn_server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def run() -> None:
        try:
            with anyio.CancelScope(shield=True):
                await uvicorn_server.serve(sockets=[sock])
        finally:
            sock.close()
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            with anyio.fail_after(_STARTUP_TIMEOUT):
                while not uvicorn_server.started and not stopped.is_set():
                    await anyio.sleep(0.01)
            if uvicorn_server.started:
                logger.info("serving MCP on http://%s:%d/mcp", host, bound_port)
                task_status.started(bound_port)
            await stopped.wait()
        finally:
            uvicorn_server.should_exit = True


def run_server(
    server: ServesMCP,
    transport: Literal["stdio", "streamable-http", "http"] = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    **options: Any,
) -> None:
    """Serve until stdin ends (stdio) or the process is interrupted (HTTP); blocks."""
    if transport == "stdio":
        from mcpdi_transport._stdio import serve_stdio

        anyio.run(lambda: serve_stdio(server, **options))
    elif transport in ("streamable-http", "http"):
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn has already shut down cleanly
            anyio.run(lambda: serve_http(server, host, port, **options))
    else:
        msg = f"Unknown transport {transport!r}; use 'stdio' or 'streamable-http'."
        raise ValueError(msg)
