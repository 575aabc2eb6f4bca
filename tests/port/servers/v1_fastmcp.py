"""A server in the official SDK's 1.x spelling (FastMCP), which mcp 2.x no longer imports."""

# The 1.x modules do not exist in mcp 2.x (that is the point); the port imports mcpdi's.
# pyright: reportMissingImports=false, reportAttributeAccessIssue=false

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.prompts import base


@dataclass
class Library:
    books: dict[str, int]


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[Library]:
    yield Library({"Dune": 3, "Emma": 0})


mcp = FastMCP("Library", instructions="Ask about books.", lifespan=lifespan, port=9000)


@mcp.tool()
async def stock(title: str, ctx: Context) -> int:
    """How many copies are on the shelf."""
    library: Library = ctx.request_context.lifespan_context
    await ctx.info(f"looking up {title}")
    if title not in library.books:
        raise ToolError(f"no book {title!r}")
    return library.books[title]


@mcp.resource("books://{title}")
def book(title: str) -> str:
    return f"The book {title}"


@mcp.resource("config://shelves")
def shelves() -> str:
    return "A, B"


@mcp.prompt()
def review(title: str) -> list[base.Message]:
    return [base.UserMessage(f"Review {title}"), base.AssistantMessage("Gladly.")]
