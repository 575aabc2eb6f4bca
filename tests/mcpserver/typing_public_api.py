"""Type-checked, never run: what a type checker infers for the public surface."""

from __future__ import annotations

from typing import Annotated, assert_type

from pydantic import BaseModel

from mcpdi import (
    AcceptedElicitation,
    AskModel,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Default,
    Elicit,
    ListRoots,
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
assert_type(Elicit("Name?", Name, fallback=Default(Name(name="guest"))), Elicit[Name])
assert_type(Elicit("Name?", Name, fallback=AskModel(argument="name", hint="Any name.")), Elicit[Name])
assert_type(ListRoots(fallback=Default(ListRootsResult(roots=[]))), ListRoots)
assert_type(MCPServer("Checked", validate_resolvers=True), MCPServer)


@mcp.tool()
def checked(who: Annotated[Name, Resolve(ask, validate=True)]) -> str:
    return who.name


async def body(ctx: Context) -> None:
    outcome = await ctx.elicit("Name?", Name)
    assert_type(outcome, AcceptedElicitation[Name] | DeclinedElicitation | CancelledElicitation)
    assert_type(await ctx.sample("hi", max_tokens=5), CreateMessageResult)
    assert_type(await ctx.list_roots(), ListRootsResult)
    assert_type(await mcp.call_tool("greet"), CallToolResult)
