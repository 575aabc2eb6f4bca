"""`ServerSlot`: the server currently served, loaded from its file again whenever the file changes."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi_transport._http._app import build_http_app

__all__ = ("Loaded", "ServerSlot")

logger = logging.getLogger("mcpdi_transport.dev")


@dataclass(frozen=True, slots=True)
class Loaded:
    """One generation of the server: the object from the file and the MCP app serving it."""

    generation: int
    server: Any
    app: ASGIApp


class ServerSlot:
    """The ASGI app at `/mcp`: forwards to the current generation's app.

    `load` is called once up front (its errors reach the caller) and again on every change
    of `watched`; a reload that fails keeps the previous generation serving and records the
    error in `reload_error` for the page to show. Each reload is told to `report`.
    """

    def __init__(
        self,
        load: Callable[[], Any],
        watched: Path,
        *,
        host: str = "127.0.0.1",
        report: Callable[[str], None] = logger.info,
    ) -> None:
        self._load = load
        self._host = host
        self._report = report
        self.watched = watched
        self.reload_error: str | None = None
        self.current: Loaded = self._build(load(), 1)
        self._stop_watching = anyio.Event()

    def stop_watching(self) -> None:
        """End the watch promptly (watchfiles waits in a thread that only this event reaches)."""
        self._stop_watching.set()

    def _build(self, server: Any, generation: int) -> Loaded:
        app = build_http_app(server, host=self._host)
        return Loaded(generation, server, app)

    def _reload_failed(self, reason: str) -> None:
        self.reload_error = reason
        self._report(f"reload failed, still serving version {self.current.generation}: {reason}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.current.app(scope, receive, send)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve generations until cancelled or `stop_watching`: the first, then one per change of the file.

        Each generation's lifespan runs in a task of its own, so that one can end while the
        next is already serving. The starter learns when the first one serves; if its
        lifespan fails, the error propagates instead.
        """
        async with anyio.create_task_group() as group:
            stop = await group.start(_hold, self.current)
            task_status.started()
            async for _ in _file_changes(self.watched, self._stop_watching):
                try:
                    loaded = self._build(self._load(), self.current.generation + 1)
                except (Exception, SystemExit) as error:  # a reload must never end the dev server
                    self._reload_failed(str(error) or type(error).__name__)
                    continue
                try:
                    next_stop = await group.start(_hold, loaded)
                except Exception as error:
                    self._reload_failed(f"the server's lifespan failed: {type(error).__name__}: {error}")
                    continue
                self.current, self.reload_error = loaded, None
                self._report(f"reloaded {self.watched} (version {loaded.generation})")
                stop.set()
                stop = next_stop
            group.cancel_scope.cancel()


async def _hold(loaded: Loaded, *, task_status: anyio.abc.TaskStatus[anyio.Event]) -> None:
    """Run `loaded`'s lifespan until the event handed to the starter is set."""
    stop = anyio.Event()
    app: Any = loaded.app
    async with app.router.lifespan_context(app):
        task_status.started(stop)
        await stop.wait()


async def _file_changes(path: Path, stop: anyio.Event) -> AsyncIterator[None]:
    """One item per burst of changes to `path`.

    The directory is watched, not the file: editors that save by writing a new file and
    renaming it over the old one would otherwise end the watch.
    """
    import watchfiles

    target = path.resolve()

    def is_target(_: object, changed: str) -> bool:
        return Path(changed).resolve() == target

    # watchfiles names trio's Event in a parameter type, which is unknown without trio installed.
    changes = watchfiles.awatch(  # pyright: ignore[reportUnknownMemberType]
        target.parent, watch_filter=is_target, debounce=200, step=50, recursive=False, stop_event=stop
    )
    async for _ in changes:
        yield None
