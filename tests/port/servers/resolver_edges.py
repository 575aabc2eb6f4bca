"""Resolver and context details SDK code relies on: errors' causes, client params, resource meta."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import InvalidSignature, ToolError, UnexpectedToolError
from pydantic import BaseModel

mcp = MCPServer("Edges")

__all__ = ("InvalidSignature", "ToolError", "UnexpectedToolError", "mcp", "register_cycle")


class Pages(BaseModel):
    pages: int


def parse_pages() -> int:
    return Pages.model_validate({"pages": "many"}).pages  # a bug of the server's: it raises


def find_shelf() -> str:
    raise LookupError("no shelf for it")


def refuse() -> str:
    raise ToolError("not for sale")


@mcp.tool()
def count_pages(pages: Annotated[int, Resolve(parse_pages)]) -> str:
    return f"{pages} pages"


@mcp.tool()
def count_words(text: str, limit: int) -> str:
    return str(Pages.model_validate({"pages": text}).pages)  # a bug of the body's: it raises


@mcp.tool()
def shelve(shelf: Annotated[str, Resolve(find_shelf)]) -> str:
    return shelf


@mcp.tool()
def sell(ok: Annotated[str, Resolve(refuse)]) -> str:
    return ok


@mcp.tool()
def who_is_asking(ctx: Context) -> str:
    params = ctx.session.client_params
    if params is None:
        return "a client that did not say"
    return f"{params.client_info.name} speaking {params.protocol_version}"


@mcp.tool()
def tag(title: str, **labels: str) -> str:
    return f"{title}: {sorted(labels.items())}"


@mcp.resource("edges://catalogue", meta={"edition": 2})
def catalogue() -> str:
    return "Dune, Emma"


@mcp.resource("edges://covers/{title}", mime_type="image/png", meta={"kind": "cover"})
def cover(title: str) -> bytes:
    return title.encode()


def ping(value: Annotated[int, Resolve(pong)]) -> int:  # pyright: ignore[reportUndefinedVariable]  # a cycle
    return value


def pong(value: Annotated[int, Resolve(ping)]) -> int:
    return value


def register_cycle() -> None:
    @mcp.tool()
    def looping(value: Annotated[int, Resolve(ping)]) -> str:
        return str(value)
