"""The ceiling: a bare Starlette endpoint answering `tools/call` with the same JSON-RPC result.

No MCP library: the body is parsed, the graph's functions are called in order by
straight-line code, and the result an MCP server would send (text content, structured
`{"result": text}`, and at 2026-07-28 `resultType` plus the server-info stamp) is returned
as JSON. `initialize` gets a minimal answer and a session id, so handshake-era load works too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchmarks.graphs import Graph
from benchmarks.servers import hand_tool

_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
_SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": ""}}


def build_app(graphs: Sequence[Graph]) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    tools = {g.name: hand_tool(g) for g in graphs}

    async def endpoint(request: Request) -> Response:
        message = json.loads(await request.body())
        method = message.get("method")
        if "id" not in message:
            return Response(status_code=202)
        params = message.get("params") or {}
        if method == "tools/call":
            text = await tools[params["name"]](params.get("arguments") or {})
            result: dict[str, Any] = {
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"result": text},
                "isError": False,
            }
            if _PROTOCOL_VERSION in (params.get("_meta") or {}):
                result["resultType"] = "complete"
                result["_meta"] = _SERVER_INFO
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": ""},
            }
            return JSONResponse(
                {"jsonrpc": "2.0", "id": message["id"], "result": result},
                headers={"mcp-session-id": "ceiling"},
            )
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": error}, status_code=404)

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST", "DELETE"])])
