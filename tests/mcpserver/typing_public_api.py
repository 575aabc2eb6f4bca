"""Type-checked, never run: what a type checker infers for the public surface."""

from __future__ import annotations

from typing import Annotated, assert_type

from pydantic import BaseModel

from mcpdi import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    MCPServer,
    Resolve,
)
from mcpdi.types import CallToolResult, CreateMessageResult, ListRootsResult

mcp = MCPServer("Typed")


class Name(BaseModel):
    name: str


def ask() -> Elicit[Name]:
    return Elicit("Name?", Name)


@mcp.tool()
def greet(who: Annotated[Name, Resolve(ask)]) -> str:
    return who.name


assert_type(Elicit("Name?", Name), Elicit[Name])


async def body(ctx: Context) -> None:
    outcome = await ctx.elicit("Name?", Name)
    assert_type(outcome, AcceptedElicitation[Name] | DeclinedElicitation | CancelledElicitation)
    assert_type(await ctx.sample("hi", max_tokens=5), CreateMessageResult)
    assert_type(await ctx.list_roots(), ListRootsResult)
    assert_type(await mcp.call_tool("greet"), CallToolResult)
