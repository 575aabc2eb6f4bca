"""The interop test server written with mcpdi: the same tools as `sdk_server.py`.

Tests serve it on stdio with the `mcpdi run` command and import `server` to serve it over HTTP.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

from mcpdi import Context, Elicit, ListRoots, MCPServer, Resolve, Sample

server = MCPServer("mcpdi-server", instructions="mcpdi's interop test server.")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_llm() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))], max_tokens=20
    )


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def greet(greeting: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet the person, asking for their name."""
    return f"{greeting}, {who.name}!"


@server.tool()
def sample_and_roots(
    llm: Annotated[CreateMessageResult, Resolve(ask_llm)],
    roots: Annotated[ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Ask the client's LLM and roots in one go."""
    text = llm.content.text if isinstance(llm.content, TextContent) else "?"
    return f"llm said {text!r}; roots={[str(root.uri) for root in roots.roots]}"


class Colour(BaseModel):
    colour: str


def ask_colour(who: Annotated[Name, Resolve(ask_name)]) -> Elicit[Colour]:
    return Elicit(f"Which colour do you like, {who.name}?", Colour)


@server.tool()
def favourite(who: Annotated[Name, Resolve(ask_name)], colour: Annotated[Colour, Resolve(ask_colour)]) -> str:
    """Ask two questions, the second only after the first was answered."""
    return f"{who.name} likes {colour.colour}"


@server.tool()
def query(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    q: str,
    limit: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Limit"})] = 10,
) -> str:
    """A tool whose region and limit are mirrored into headers."""
    return f"{region}:{q}:{limit}"


@server.tool()
async def slow(n: int, ctx: Context) -> str:
    """Report progress and log along the way."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
        await ctx.info(f"log {step}")
    return "done"


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review: {code}"


@server.resource("memo://greeting")
def greeting() -> str:
    """A fixed memo."""
    return "hello from mcpdi"


@server.resource("memo://notes/{topic}")
def notes(topic: str) -> str:
    """Notes per topic."""
    return f"notes on {topic}"


if __name__ == "__main__":
    server.run()
