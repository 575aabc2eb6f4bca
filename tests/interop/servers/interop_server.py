"""The interop test server's tools, prompt and resources, written once for either framework.

`build_server` takes the module it builds with: `mcpdi` (`mcpdi_server.py`) or the official SDK's
`mcp.server.mcpserver` (`sdk_server.py`). Both frameworks spell the names used here alike, so each
client is tested against the same tools on both servers.
"""

# No `from __future__ import annotations`: the tools are defined inside `build_server`, so their
# annotations name the framework's classes and must be evaluated where they are written.

from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Annotated, Any

from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field


class Name(BaseModel):
    name: str


class Colour(BaseModel):
    colour: str


async def log_info(ctx: Any, message: str) -> None:
    await ctx.info(message)


def build_server(
    framework: ModuleType,
    name: str,
    *,
    instructions: str,
    greeting_text: str,
    log: Callable[[Any, str], Awaitable[None]] = log_info,
) -> Any:
    """An `MCPServer` of `framework` with the interop tools; `log` sends the `slow` tool's logs."""
    Context, Elicit, Resolve = framework.Context, framework.Elicit, framework.Resolve
    server = framework.MCPServer(name, instructions=instructions)

    def ask_name() -> Elicit[Name]:  # pyright: ignore[reportInvalidTypeForm]  # the framework is a parameter
        return Elicit("What is your name?", Name)

    def ask_llm() -> framework.Sample:  # pyright: ignore[reportInvalidTypeForm]  # the framework is a parameter
        return framework.Sample(
            [SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))], max_tokens=20
        )

    def ask_roots() -> framework.ListRoots:  # pyright: ignore[reportInvalidTypeForm]  # the framework is a parameter
        return framework.ListRoots()

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

    def ask_colour(who: Annotated[Name, Resolve(ask_name)]) -> Elicit[Colour]:  # pyright: ignore[reportInvalidTypeForm]  # the framework is a parameter
        return Elicit(f"Which colour do you like, {who.name}?", Colour)

    @server.tool()
    def favourite(
        who: Annotated[Name, Resolve(ask_name)], colour: Annotated[Colour, Resolve(ask_colour)]
    ) -> str:
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
    async def slow(n: int, ctx: Context) -> str:  # pyright: ignore[reportInvalidTypeForm]  # the framework is a parameter
        """Report progress and log along the way."""
        for step in range(1, n + 1):
            await ctx.report_progress(step, n, f"step {step}")
            await log(ctx, f"log {step}")
        return "done"

    @server.prompt()
    def review(code: str) -> str:
        """Ask for a code review."""
        return f"Please review: {code}"

    @server.resource("memo://greeting")
    def greeting() -> str:
        """A fixed memo."""
        return greeting_text

    @server.resource("memo://notes/{topic}")
    def notes(topic: str) -> str:
        """Notes per topic."""
        return f"notes on {topic}"

    return server
