"""The `MCPServer` methods a server's own tests call, written against the SDK."""

from __future__ import annotations

import logging

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from pydantic import BaseModel

mcp = MCPServer()
unnamed_default = mcp.name


class Sum(BaseModel):
    total: int


@mcp.tool()
def add(a: int, b: int) -> Sum:
    return Sum(total=a + b)


@mcp.tool()
def undocumented(x: int) -> int:
    return x


@mcp.tool()
def refuse(reason: str) -> str:
    raise ToolError(reason)


@mcp.tool()
async def broken(ctx: Context) -> str:
    raise KeyError("internal")


@mcp.tool()
async def locked() -> str:
    raise ResourceError("the vault is locked")


@mcp.prompt()
def hello(name: str) -> str:
    """Say hello."""
    return f"Hello {name}"


@mcp.resource("api://motd")
def motd() -> str:
    return "Have a nice day"


@mcp.resource("api://users/{user}")
def user(user: str) -> str:
    return f"user {user}"


def register_duplicates(caplog_records: list[logging.LogRecord]) -> None:
    @mcp.tool(name="add")
    def second_add(a: int, b: int) -> int:
        return 0


__all__ = ("ToolError", "UnexpectedToolError")
