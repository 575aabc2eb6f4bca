"""The one place where the sans-IO core hands a server to the I/O layer, `mcpdi_transport`.

The core never imports the transport at module level (the layer rule); `Server.run`,
`Server.streamable_http_app` and their `MCPServer` twins call these two functions, which
import it on demand and say how to get it when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from mcpdi.lowlevel._sdk_options import app_options

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpdi_transport._listen import ServesMCP

__all__ = ("TransportName", "build_app", "build_sse_app", "serve", "serve_async")

TransportName = Literal["stdio", "streamable-http", "http", "sse"]


def _transport() -> Any:
    try:
        import mcpdi_transport
    except ImportError as error:  # pragma: no cover - both packages ship in one distribution
        msg = "serving needs the mcpdi_transport package, which ships with mcpdi; reinstall mcpdi"
        raise ImportError(msg) from error
    return mcpdi_transport


def build_app(server: ServesMCP, **options: Any) -> Starlette:
    """A Starlette app serving `server` over Streamable HTTP (`mcpdi_transport.build_http_app`).

    `options` may be spelled as the official SDK spells them (`stateless_http=`, ...).
    """
    app: Starlette = _transport().build_http_app(server, **app_options(options))
    return app


def build_sse_app(server: ServesMCP, **options: Any) -> Starlette:
    """A Starlette app serving `server` over the legacy HTTP+SSE transport (SDK spellings taken)."""
    app: Starlette = _transport().build_sse_app(server, **app_options(options))
    return app


def serve(server: ServesMCP, transport: TransportName, **options: Any) -> None:
    """Serve `server` until stopped (`mcpdi_transport.run_server`); blocks."""
    if transport not in ("stdio", "streamable-http", "http", "sse"):
        msg = f"unknown transport {transport!r}; use 'stdio', 'streamable-http' (alias 'http') or 'sse'"
        raise ValueError(msg)
    _transport().run_server(server, transport, **app_options(options))


async def serve_async(server: ServesMCP, transport: TransportName, **options: Any) -> None:
    """Serve `server` until cancelled, in the running event loop (`serve_stdio`, `serve_http`)."""
    if transport == "stdio":
        await _transport().serve_stdio(server, **options)
    elif transport in ("streamable-http", "http"):
        await _transport().serve_http(server, **app_options(options))
    elif transport == "sse":
        await _transport().serve_sse(server, **app_options(options))
    else:
        msg = f"unknown transport {transport!r}; use 'stdio', 'streamable-http' (alias 'http') or 'sse'"
        raise ValueError(msg)
