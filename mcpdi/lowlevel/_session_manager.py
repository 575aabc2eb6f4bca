"""`server.session_manager`: what an app that mounts the MCP app enters, as with the official SDK."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Final

__all__ = ("NOT_BUILT", "SessionManager")

NOT_BUILT: Final = (
    "Session manager can only be accessed after calling streamable_http_app(). "
    "The session manager is created lazily to avoid unnecessary initialization."
)


class SessionManager:
    """The sessions of the app `streamable_http_app()` built last.

    An outer app that mounts it (Starlette does not run a mounted app's lifespan) enters
    `session_manager.run()` from its own lifespan, as SDK code does:
    `async with mcp.session_manager.run(): yield`. `handle_request` is that app as a
    plain ASGI callable.
    """

    def __init__(self, app: Any) -> None:
        self._app = app

    def run(self) -> AbstractAsyncContextManager[None]:
        """Start the server (its lifespan, session sweeping) until the block exits."""
        lifespan: AbstractAsyncContextManager[None] = self._app.router.lifespan_context(self._app)
        return lifespan

    async def handle_request(self, scope: Any, receive: Any, send: Any) -> None:
        await self._app(scope, receive, send)
