"""`FastMCP`: `MCPServer` with the 1.x constructor, settings and `run` of the official SDK."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcpdi import AuthSettings, Icon, MCPServer, TokenVerifier

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ("FastMCP", "Settings")

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


@dataclass(slots=True)
class Settings:
    """1.x's `mcp.settings`: how the server is served; set a field before `run()` to change it."""

    debug: bool = False
    log_level: LogLevel = "INFO"
    host: str = "127.0.0.1"
    port: int = 8000
    mount_path: str = "/"
    sse_path: str = "/sse"
    message_path: str = "/messages/"
    streamable_http_path: str = "/mcp"
    json_response: bool = False
    stateless_http: bool = False
    warn_on_duplicate_resources: bool = True
    warn_on_duplicate_tools: bool = True
    warn_on_duplicate_prompts: bool = True
    dependencies: list[str] = field(default_factory=list[str])
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None
    auth: AuthSettings | None = None
    transport_security: Any = None


class FastMCP(MCPServer[Any]):
    """The SDK 1.x's `FastMCP(name, instructions, ...)`, served by mcpdi.

    `event_store=` is refused as `streamable_http_app(event_store=...)` is; the SSE
    transport (`run("sse")`, `sse_app(mount_path)`) is served from `mcp.settings`.
    """

    def __init__(
        self,
        name: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        auth_server_provider: object | None = None,
        token_verifier: TokenVerifier | None = None,
        event_store: object | None = None,
        *,
        tools: Sequence[Any] | None = None,
        debug: bool = False,
        log_level: LogLevel = "INFO",
        host: str = "127.0.0.1",
        port: int = 8000,
        mount_path: str = "/",
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        streamable_http_path: str = "/mcp",
        json_response: bool = False,
        stateless_http: bool = False,
        warn_on_duplicate_resources: bool = True,
        warn_on_duplicate_tools: bool = True,
        warn_on_duplicate_prompts: bool = True,
        dependencies: Sequence[str] = (),
        lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None,
        auth: AuthSettings | None = None,
        transport_security: Any = None,
        **options: Any,
    ) -> None:
        super().__init__(
            name,
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            auth_server_provider=auth_server_provider,
            token_verifier=token_verifier,
            tools=tools,
            debug=debug,
            log_level=log_level,
            warn_on_duplicate_resources=warn_on_duplicate_resources,
            warn_on_duplicate_tools=warn_on_duplicate_tools,
            warn_on_duplicate_prompts=warn_on_duplicate_prompts,
            dependencies=list(dependencies),
            lifespan=lifespan,
            auth=auth,
            **options,
        )
        self._event_store = event_store
        self.settings = Settings(  # pyright: ignore[reportIncompatibleVariableOverride]
            debug,
            log_level,
            host,
            port,
            mount_path,
            sse_path,
            message_path,
            streamable_http_path,
            json_response,
            stateless_http,
            warn_on_duplicate_resources,
            warn_on_duplicate_tools,
            warn_on_duplicate_prompts,
            list(dependencies),
            lifespan,
            auth,
            transport_security,
        )

    def _serving(self) -> dict[str, Any]:
        s = self.settings
        return {
            "streamable_http_path": s.streamable_http_path,
            "json_response": s.json_response,
            "stateless_http": s.stateless_http,
            "event_store": self._event_store,
            "transport_security": s.transport_security,
        }

    def streamable_http_app(self, **options: Any) -> Starlette:  # pyright: ignore[reportIncompatibleMethodOverride]
        """The app 1.x built from `mcp.settings` (keywords override them)."""
        merged: dict[str, Any] = {**self._serving(), "host": self.settings.host, **options}
        return super().streamable_http_app(**merged)

    def sse_app(self, mount_path: str | None = None, **options: Any) -> Starlette:  # pyright: ignore[reportIncompatibleMethodOverride]
        """The SSE app 1.x built from `mcp.settings`; its `endpoint` event names `mount_path` too."""
        s = self.settings
        merged: dict[str, Any] = {
            "sse_path": s.sse_path,
            "message_path": s.message_path,
            "mount_path": s.mount_path if mount_path is None else mount_path,
            "transport_security": s.transport_security,
            "host": s.host,
            **options,
        }
        return super().sse_app(**merged)

    def run(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, transport: Literal["stdio", "sse", "streamable-http"] = "stdio", mount_path: str | None = None
    ) -> None:
        """Serve as 1.x did: on stdio, or over HTTP (SSE or Streamable) at `settings.host:settings.port`."""
        if transport == "sse":
            s = self.settings
            mount = s.mount_path if mount_path is None else mount_path
            options: dict[str, Any] = {"sse_path": s.sse_path, "message_path": s.message_path}
            options |= {"mount_path": mount, "transport_security": s.transport_security}
            super().run("sse", host=s.host, port=s.port, **options)
            return
        if transport == "stdio":
            super().run("stdio")
            return
        super().run(transport, host=self.settings.host, port=self.settings.port, **self._serving())

    async def run_streamable_http_async(self, **options: Any) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        merged: dict[str, Any] = {**self._serving(), **options}
        await super().run_streamable_http_async(host=self.settings.host, port=self.settings.port, **merged)
