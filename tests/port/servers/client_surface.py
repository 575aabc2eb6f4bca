"""A server for client-side porting: slow tools, completion, a question, a sampling question with tools."""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import Elicit, MCPServer, Resolve, Sample
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResultWithTools,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
    Tool,
)
from pydantic import BaseModel

mcp = MCPServer("Client surface")


class Name(BaseModel):
    name: str


@mcp.tool()
async def slow(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "done"


def ask_name() -> Elicit[Name]:
    return Elicit("Who are you?", Name)


@mcp.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    return f"Hello {who.name}"


WEATHER = Tool(name="weather", input_schema={"type": "object", "properties": {"city": {"type": "string"}}})


def ask_model() -> Sample:
    question = SamplingMessage(role="user", content=TextContent(type="text", text="Weather in Oslo?"))
    return Sample([question], max_tokens=50, tools=[WEATHER])


@mcp.tool()
def forecast(answer: Annotated[CreateMessageResultWithTools, Resolve(ask_model)]) -> str:
    block = answer.content[0] if isinstance(answer.content, list) else answer.content
    return f"{answer.stop_reason}: {block.type}"


@mcp.prompt()
def hello(name: str) -> str:
    return f"Hello {name}"


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    names = ["Ada", "Alan", "Grace"]
    return Completion(values=[n for n in names if n.startswith(argument.value)], total=None, has_more=False)
