"""A server that leans on `Context`: lifespan, logging, progress, reading its own resources, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError


@dataclass
class Shop:
    stock: dict[str, int]


@asynccontextmanager
async def lifespan(server: MCPServer[Shop]) -> AsyncIterator[Shop]:
    yield Shop(stock={"dune": 3, "emma": 0})


mcp = MCPServer("Context use", "Context Use", "Tools that use the request context.", lifespan=lifespan)


@mcp.resource("shop://greeting")
def greeting() -> str:
    return "Welcome to the shop"


@mcp.resource("shop://stock/{title}")
def stock_of(title: str) -> str:
    if title == "secret":
        raise ResourceError("the secret shelf is closed")
    if title not in ("dune", "emma"):
        raise ResourceNotFoundError(f"no book called {title}")
    return f"{title} is on the shelf"


@mcp.tool()
async def count(title: str, ctx: Context[Shop, Any]) -> int:
    """How many copies are in stock."""
    await ctx.info(f"counting {title}")
    await ctx.report_progress(1, 2, "looked up")
    return ctx.request_context.lifespan_context.stock.get(title, 0)


@mcp.tool()
async def shelf(title: str, ctx: Context) -> str:
    contents = await ctx.read_resource(f"shop://stock/{title}")
    return " / ".join(str(item.content) for item in contents)


@mcp.tool()
async def welcome(ctx: Context) -> str:
    contents = list(await ctx.read_resource("shop://greeting"))
    return f"{contents[0].content} ({contents[0].mime_type}) from {ctx.mcp_server.name}"


@mcp.tool()
def order(title: str, copies: int) -> str:
    if copies > 2:
        raise ToolError(f"at most 2 copies of {title}")
    return f"ordered {copies} x {title}"


@mcp.tool()
def crash() -> str:
    raise ValueError("internal detail that must not leak")
