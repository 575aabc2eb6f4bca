"""`serve_dev` and the blocking `run_dev`: the dev app under uvicorn on a loopback socket."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO, cast

import anyio
import anyio.abc

from mcpdi_transport._listen import bind_socket

if TYPE_CHECKING:
    from mcpdi_transport._dev._slot import ServerSlot

__all__ = ("DEV_HOST", "ServerDidNotStart", "run_dev", "serve_dev")

DEV_HOST: Final = "127.0.0.1"
"""The page can call every tool of the server: it is served on loopback only."""


class ServerDidNotStart(Exception):
    """The server's lifespan failed before the first request could be served."""


def _innermost(error: BaseException) -> BaseException:
    """The one error a chain of single-member exception groups wraps."""
    if not isinstance(error, BaseExceptionGroup):
        return error
    group = cast("BaseExceptionGroup[BaseException]", error)
    return _innermost(group.exceptions[0]) if len(group.exceptions) == 1 else group


async def serve_dev(
    load: Callable[[], Any],
    watched: Path,
    port: int = 0,
    *,
    out: TextIO | None = None,
    log_level: str = "warning",
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the dev page and the server `load()` returns until cancelled; reload when `watched` changes.

    `load` runs first (its errors reach the caller before anything is bound) and again on
    every change. Then the socket is bound (`CannotListen`), then the server's lifespan is
    entered (`ServerDidNotStart` if it fails), then the page's URL is printed to `out` once
    the server accepts connections.
    """
    from mcpdi_transport._dev._slot import ServerSlot

    def report(line: str) -> None:
        if out is not None:
            print(f"mcpdi dev: {line}", file=out, flush=True)

    slot = ServerSlot(load, watched, host=DEV_HOST, report=report)
    sock = bind_socket(DEV_HOST, port)
    failure: BaseException | None = None
    try:
        async with anyio.create_task_group() as generations:
            try:
                await generations.start(slot.run)
            except Exception as error:
                failure = _innermost(error)
            else:
                try:
                    await _serve_page(slot, sock, out, log_level, task_status)
                finally:
                    slot.stop_watching()
                    generations.cancel_scope.cancel()
    finally:
        sock.close()
    if failure is not None:
        msg = f"the server's lifespan failed: {type(failure).__name__}: {failure}"
        raise ServerDidNotStart(msg)


async def _serve_page(
    slot: ServerSlot,
    sock: socket.socket,
    out: TextIO | None,
    log_level: str,
    task_status: anyio.abc.TaskStatus[int],
) -> None:
    import uvicorn

    from mcpdi_transport._dev._app import MCP_PATH, build_dev_app
    from mcpdi_transport._http._uvicorn import serve_on_socket

    bound: int = sock.getsockname()[1]
    # The app has no lifespan of its own: the slot runs the server's.
    config = uvicorn.Config(build_dev_app(slot, host=DEV_HOST), log_level=log_level, lifespan="off")
    server = uvicorn.Server(config)

    def started() -> None:
        if out is not None:
            page = f"http://{DEV_HOST}:{bound}/"
            endpoint = f"{page.rstrip('/')}{MCP_PATH}"
            print(f"mcpdi dev: {page}  (MCP endpoint {endpoint})", file=out, flush=True)
            print(f"mcpdi dev: watching {slot.watched} for changes; Ctrl-C stops", file=out, flush=True)
        task_status.started(bound)

    await serve_on_socket(server, sock, started=started, close_socket=False)


def run_dev(load: Callable[[], Any], watched: Path, port: int, out: TextIO) -> None:
    """Blocking `serve_dev` for the command line; Ctrl-C ends it cleanly."""
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(lambda: serve_dev(load, watched, port, out=out))
