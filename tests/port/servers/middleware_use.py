"""Middleware as the SDK spells it: `async (ctx, call_next)` on `middleware=` and `mcp.middleware`."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

seen: list[str] = []
closed = {"now": False}


async def record(ctx: Any, call_next: Any) -> Any:
    if ctx.method.startswith("tools/"):
        seen.append(ctx.method)
    return await call_next(ctx)


async def closing_time(ctx: Any, call_next: Any) -> Any:
    if closed["now"] and ctx.method == "tools/call":
        raise MCPError(-32001, "The shop is closed")
    return await call_next(ctx)


mcp = MCPServer("Middleware", middleware=[record])
mcp.middleware.append(closing_time)


@mcp.tool()
def browse() -> str:
    return "shelves"
