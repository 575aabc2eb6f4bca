"""`ServerSlot`: the server currently served, loaded from its file again whenever the file changes."""

from __future__ import annotations

import contextlib
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
    error in `reload_error` for the page to show. `run` owns every generation's lifespan, so
    each is entered and exited in the same task.
    """

    def __init__(self, load: Callable[[], Any], watched: Path, *, host: str = "127.0.0.1") -> None:
        self._load = load
        self._host = host
        self.watched = watched
        self.reload_error: str | None = None
        self.current: Loaded = self._build(load(), 1)
        self.started = anyio.Event()

    def _build(self, server: Any, generation: int) -> Loaded:
        app = build_http_app(server, host=self._host)
        return Loaded(generation, server, app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.current.app(scope, receive, send)

    async def run(self, changes: anyio.abc.ObjectReceiveStream[object] | None = None) -> None:
        """Serve generations until cancelled: enter the first, then swap on each item of `changes`.

        Without `changes`, the file itself is watched with `watchfiles`.
        """
        async with contextlib.AsyncExitStack() as outer:
            stack = await outer.enter_async_context(contextlib.AsyncExitStack())
            await stack.enter_async_context(_lifespan(self.current))
            self.started.set()
            async for _ in changes if changes is not None else _file_changes(self.watched):
                stack = await self._reload(stack)
            await stack.aclose()

    async def _reload(self, stack: contextlib.AsyncExitStack) -> contextlib.AsyncExitStack:
        fresh = contextlib.AsyncExitStack()
        try:
            loaded = self._build(self._load(), self.current.generation + 1)
            await fresh.enter_async_context(_lifespan(loaded))
        except Exception as error:
            await fresh.aclose()
            self.reload_error = str(error) or type(error).__name__
            logger.warning("mcpdi dev: reload failed, still serving the previous version: %s", error)
            return stack
        self.current, self.reload_error = loaded, None
        logger.warning("mcpdi dev: reloaded %s (version %d)", self.watched, loaded.generation)
        await stack.aclose()
        return fresh


def _lifespan(loaded: Loaded) -> contextlib.AbstractAsyncContextManager[Any]:
    app: Any = loaded.app
    return app.router.lifespan_context(app)


async def _file_changes(path: Path) -> AsyncIterator[None]:
    """One item per burst of changes to `path`.

    The directory is watched, not the file: editors that save by writing a new file and
    renaming it over the old one would otherwise end the watch.
    """
    import watchfiles

    target = path.resolve()

    def is_target(_: object, changed: str) -> bool:
        return Path(changed).resolve() == target

    async for _ in watchfiles.awatch(target.parent, watch_filter=is_target, debounce=200, step=50):
        yield None
