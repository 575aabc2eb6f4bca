"""How an `MCPServer` is served: `run`, its HTTP apps and `custom_route` behind its methods.

Each keeps the server's `serving_options` on its low-level `Server` (bearer auth, custom
routes and debug hold however it is started); `run` and the app map the reference SDK's
spelling of the HTTP options onto `build_http_app`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpdi.lowlevel._serving import CustomRoute

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._handover import TransportName

__all__ = ("custom_route", "run", "sse_app", "streamable_http_app")

Endpoint = Callable[[Any], Awaitable[Any]]


def _http_options(
    stateless_http: bool | None, json_response: bool | None, streamable_http_path: str | None
) -> dict[str, Any]:
    """The reference server's spelling of HTTP options, as `build_http_app` names them."""
    options: dict[str, Any] = {}
    if stateless_http is not None:
        options["stateless"] = stateless_http
    if json_response is not None:
        options["json_response"] = json_response
    if streamable_http_path is not None:
        options["path"] = streamable_http_path
    return options


def streamable_http_app(
    mcp: MCPServer[Any],
    stateless_http: bool | None,
    json_response: bool | None,
    streamable_http_path: str | None,
    options: dict[str, Any],
) -> Starlette:
    """`mcp.streamable_http_app(...)`: the app, its session manager kept for `mcp.session_manager`."""
    from mcpdi.lowlevel._handover import build_app

    mcp.server.serving_options = mcp.serving_options
    app = build_app(mcp, **_http_options(stateless_http, json_response, streamable_http_path), **options)
    return mcp.server.keep_session_manager(app)


def sse_app(mcp: MCPServer[Any], sse_path: str, message_path: str, options: dict[str, Any]) -> Starlette:
    """`mcp.sse_app(...)`: the legacy HTTP+SSE app, `GET sse_path` and `POST message_path`."""
    from mcpdi.lowlevel._handover import build_sse_app

    mcp.server.serving_options = mcp.serving_options
    return build_sse_app(mcp, sse_path=sse_path, message_path=message_path, **options)


def run(
    mcp: MCPServer[Any],
    transport: TransportName,
    host: str,
    port: int,
    stateless_http: bool | None,
    json_response: bool | None,
    streamable_http_path: str | None,
    options: dict[str, Any],
) -> None:
    """`mcp.run(...)`: stdio refuses HTTP options; every other transport is served on `host:port`."""
    mcp.server.serving_options = mcp.serving_options
    if transport == "stdio":
        extra = _http_options(stateless_http, json_response, streamable_http_path)
        if extra or options:
            msg = f"HTTP options {sorted({*extra, *options})} make no sense with transport='stdio'"
            raise TypeError(msg)
        mcp.server.run(transport)
        return
    from mcpdi.lowlevel._handover import serve

    options = {**_http_options(stateless_http, json_response, streamable_http_path), **options}
    serve(mcp, transport, host=host, port=port, **options)


def custom_route(
    mcp: MCPServer[Any],
    routes: list[CustomRoute],
    path: str,
    methods: list[str],
    name: str | None,
    include_in_schema: bool,
) -> Callable[[Endpoint], Endpoint]:
    """`@mcp.custom_route(...)`: the decorator that adds the endpoint to `routes` and serves it."""

    def register(endpoint: Endpoint) -> Endpoint:
        routes.append(CustomRoute(path, endpoint, tuple(methods), name, include_in_schema))
        mcp.server.serving_options = mcp.serving_options
        return endpoint

    return register
