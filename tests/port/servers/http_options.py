"""HTTP serving options and a plain route next to MCP, written against the SDK."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse

mcp = MCPServer("Http options", website_url="https://example.com", version="1.2.3")


@mcp.custom_route("/health", methods=["GET"])
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


@mcp.tool()
async def changed(ctx: Context) -> str:
    await ctx.session.send_tool_list_changed()
    return "told"


def build_app():  # type: ignore[no-untyped-def]
    return mcp.streamable_http_app(stateless_http=True, json_response=True, streamable_http_path="/rpc")
