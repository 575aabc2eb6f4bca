"""A server in the SDK 1.x low-level style; only its import lines name mcpdi.

1.x spelled them `from mcp.server.lowlevel import NotificationOptions, Server`,
`from mcp.server.lowlevel.helper_types import ReadResourceContents`,
`from mcp.server.stdio import stdio_server` and `import mcp.types as types`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

import mcpdi.types as types
from mcpdi.compat.lowlevel import NotificationOptions, ReadResourceContents, Server, stdio_server

SHELF = {"Dune": 3, "Emma": 0}


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    yield {"shelf": SHELF, "opened_by": server.name}


server = Server("bookshop", version="1.2.0", instructions="Ask about books.", lifespan=lifespan)

STOCK = types.Tool(
    name="stock",
    description="Copies on the shelf.",
    input_schema={"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    output_schema={"type": "object", "properties": {"copies": {"type": "integer"}}, "required": ["copies"]},
)
TOOLS = [
    STOCK,
    STOCK.model_copy(update={"name": "unstructured"}),
    STOCK.model_copy(update={"name": "both"}),
    types.Tool(name="whoami", description="Who is asking.", input_schema={"type": "object"}),
    types.Tool(name="broken", description="Returns a number.", input_schema={"type": "object"}),
    types.Tool(
        name="lying",
        description="Bad structured output.",
        input_schema=STOCK.input_schema,
        output_schema=STOCK.output_schema,
    ),
]


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return TOOLS


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    ctx = server.request_context
    if name == "stock":
        title = arguments["title"]
        if title not in ctx.lifespan_context["shelf"]:
            raise ValueError(f"no book {title!r}")
        return {"copies": ctx.lifespan_context["shelf"][title]}
    if name == "whoami":
        return [types.TextContent(text=f"{ctx.lifespan_context['opened_by']}:{ctx.request_id}")]
    if name == "broken":
        return 42
    if name == "lying":
        return {"copies": "many"}
    if name == "unstructured":
        return [types.TextContent(text="3")]
    if name == "both":
        return [types.TextContent(text="three")], {"copies": 3}
    raise ValueError(f"Unknown tool: {name}")


@server.list_resources()
async def list_resources() -> list[types.Resource]:
    return [
        types.Resource(uri="config://shelves", name="shelves", mime_type="text/plain"),
        types.Resource(uri="cover://dune", name="cover"),
    ]


@server.list_resource_templates()
async def list_resource_templates() -> list[types.ResourceTemplate]:
    return [types.ResourceTemplate(uri_template="books://{title}", name="book")]


@server.read_resource()
async def read_resource(uri: Any) -> Any:
    uri = str(uri)
    if uri == "config://shelves":
        return "A, B"
    if uri == "cover://dune":
        return [ReadResourceContents(content=b"\x89PNG", mime_type="image/png")]
    if uri.startswith("books://"):
        return [
            ReadResourceContents(
                content=f"The book {uri.removeprefix('books://')}", mime_type="text/markdown"
            )
        ]
    raise ValueError(f"Unknown resource: {uri}")


@server.list_prompts()
async def list_prompts() -> list[types.Prompt]:
    return [types.Prompt(name="review", arguments=[types.PromptArgument(name="title", required=True)])]


@server.get_prompt()
async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    if name != "review":
        raise ValueError(f"Unknown prompt: {name}")
    title = (arguments or {})["title"]
    return types.GetPromptResult(
        description="A review",
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=f"Review {title}"))],
    )


@server.completion()
async def complete(ref: Any, argument: types.CompletionArgument, context: Any) -> types.Completion | None:
    if argument.name != "title":
        return None
    values = [title for title in SHELF if title.startswith(argument.value)]
    return types.Completion(values=values, total=len(values), has_more=False)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


if __name__ == "__main__":
    anyio.run(main)
