"""`serve_dev` and the blocking `run_dev`: the dev app under uvicorn on a loopback socket."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TextIO

import anyio
import anyio.abc

from mcpdi_transport._listen import bind_socket

__all__ = ("DEV_HOST", "run_dev", "serve_dev")

DEV_HOST: Final = "127.0.0.1"
"""The page can call every tool of the server: it is served on loopback only."""

_STARTUP_TIMEOUT: Final = 30.0


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

    `load` runs now (its errors reach the caller before anything is bound) and again on every
    change. The page's URL is printed to `out` once the server accepts connections.
    """
    import uvicorn

    from mcpdi_transport._dev._app import MCP_PATH, build_dev_app
    from mcpdi_transport._dev._slot import ServerSlot

    def report(line: str) -> None:
        if out is not None:
            print(f"mcpdi dev: {line}", file=out, flush=True)

    slot = ServerSlot(load, watched, host=DEV_HOST, report=report)
    sock = bind_socket(DEV_HOST, port)
    bound: int = sock.getsockname()[1]
    config = uvicorn.Config(build_dev_app(slot, host=DEV_HOST), log_level=log_level, lifespan="on")
    server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def run() -> None:
        try:
            with anyio.CancelScope(shield=True):
                await server.serve(sockets=[sock])
        finally:
            sock.close()
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            with anyio.fail_after(_STARTUP_TIMEOUT):
                while not server.started and not stopped.is_set():
                    await anyio.sleep(0.01)
            if server.started:
                if out is not None:
                    page = f"http://{DEV_HOST}:{bound}/"
                    print(
                        f"mcpdi dev: {page}  (MCP endpoint {page.rstrip('/')}{MCP_PATH})",
                        file=out,
                        flush=True,
                    )
                    print(f"mcpdi dev: watching {watched} for changes; Ctrl-C stops", file=out, flush=True)
                task_status.started(bound)
            await stopped.wait()
        finally:
            server.should_exit = True


def run_dev(load: Callable[[], Any], watched: Path, port: int, out: TextIO) -> None:
    """Blocking `serve_dev` for the command line; Ctrl-C ends it cleanly."""
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(lambda: serve_dev(load, watched, port, out=out))
