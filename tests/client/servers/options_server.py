"""A server whose tools show what each `Client(...)` option changed (served on stdio, HTTP, in memory)."""

from __future__ import annotations

import json
from typing import Annotated

import anyio
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

from mcpdi import Context, Elicit, ListRoots, MCPServer, Resolve, Sample


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_again(first: Annotated[Name, Resolve(ask_name)]) -> Elicit[Name]:
    return Elicit(f"And after {first.name}?", Name)


def ask_llm() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))], max_tokens=5
    )


def ask_roots() -> ListRoots:
    return ListRoots()


server = MCPServer("options")


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    return f"hello {who.name}"


@server.tool()
def twice(second: Annotated[Name, Resolve(ask_again)]) -> str:
    return second.name


@server.tool()
def llm(answer: Annotated[CreateMessageResult, Resolve(ask_llm)]) -> str:
    return answer.content.text if isinstance(answer.content, TextContent) else "?"


@server.tool()
def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> list[str]:
    return [str(root.uri) for root in found.roots]


@server.tool()
async def log(ctx: Context) -> str:
    await ctx.debug("a debug line")
    await ctx.warning("a warning line")
    return "logged"


@server.tool()
def whoami(ctx: Context) -> str:
    info = ctx.client_info
    return "?" if info is None else f"{info.name}/{info.version}"


@server.tool()
def sampling_seen(ctx: Context) -> str:
    capabilities = ctx.client_capabilities
    sampling = None if capabilities is None else capabilities.sampling
    return "none" if sampling is None else sampling.model_dump_json(by_alias=True, exclude_none=True)


@server.tool()
def header(ctx: Context, name: str) -> str:
    return str((ctx.headers or {}).get(name))


@server.tool()
async def extensions_seen(ctx: Context) -> str:
    """The client's declared extensions, after telling it of a `com.example/tick` (an extension's own)."""
    await ctx.session.send_notification("com.example/tick", {"n": 7})
    capabilities = ctx.client_capabilities
    extensions = None if capabilities is None else capabilities.extensions
    return json.dumps(extensions, sort_keys=True)


@server.tool()
async def sleepy(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    server.run()
