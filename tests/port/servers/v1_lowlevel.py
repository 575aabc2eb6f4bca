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
from pydantic import AnyUrl

import mcpdi.types as types
from mcpdi.compat.lowlevel import NotificationOptions, ReadResourceContents, Server, stdio_server

SHELF = {"Dune": 3, "Emma": 0}
HEARD: list[tuple[Any, float, float | None, str | None]] = []  # the client's progress notifications
LISTENING: list[anyio.Event] = []  # tools waiting for the next progress notification
LEVELS: list[str] = []
SUBSCRIBED: list[str] = []


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
    types.Tool(name="triple", description="Three blocks in a tuple.", input_schema={"type": "object"}),
    types.Tool(name="where", description="How the request came.", input_schema={"type": "object"}),
    types.Tool(
        name="heard", description="The client's progress, once heard.", input_schema={"type": "object"}
    ),
    types.Tool(name="asked", description="Levels and subscriptions asked.", input_schema={"type": "object"}),
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
    if name == "triple":
        return tuple(types.TextContent(text=word) for word in ("one", "two", "three"))
    if name == "where":
        request = ctx.request
        token = ctx.meta.progressToken if ctx.meta is not None else None
        how = "stdio" if request is None else f"{request.method} {request.url.path}"
        return [types.TextContent(text=f"{how}; token {token}")]
    if name == "heard":
        with anyio.fail_after(10):
            while not HEARD:
                LISTENING.append(heard := anyio.Event())
                await heard.wait()
        return [types.TextContent(text=repr(HEARD))]
    if name == "asked":
        await ctx.session.send_log_message("warning", "asked", logger="shop")
        return [types.TextContent(text=f"{LEVELS} {SUBSCRIBED}")]
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
async def read_resource(uri: AnyUrl) -> Any:
    if str(uri) == "config://shelves":
        return "A, B"
    if str(uri) == "cover://dune":
        return [ReadResourceContents(content=b"\x89PNG", mime_type="image/png", meta={"shot": "front"})]
    if uri.scheme == "books":
        return [ReadResourceContents(content=f"The book {uri.host}", mime_type="text/markdown")]
    if uri.scheme == "count":
        return 42
    raise ValueError(f"Unknown resource: {uri}")


@server.subscribe_resource()
async def subscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.append(f"+{uri.scheme}")


@server.unsubscribe_resource()
async def unsubscribe(uri: AnyUrl) -> None:
    SUBSCRIBED.append(f"-{uri.scheme}")


@server.set_logging_level()
async def set_level(level: types.LoggingLevel) -> None:
    LEVELS.append(level)


@server.progress_notification()
async def progress(
    progress_token: str | int, progress: float, total: float | None, message: str | None
) -> None:
    HEARD.append((progress_token, progress, total, message))
    while LISTENING:
        LISTENING.pop().set()


PROMPTS = [
    types.Prompt(name="review", arguments=[types.PromptArgument(name="title", required=True)]),
    types.Prompt(name="blurb"),
]


@server.list_prompts()
async def list_prompts(request: types.ListPromptsRequest) -> types.ListPromptsResult:
    """Given the request (its parameter is typed so): one prompt a page."""
    page = int(request.params.cursor) if request.params is not None and request.params.cursor else 0
    after = str(page + 1) if page + 1 < len(PROMPTS) else None
    return types.ListPromptsResult(prompts=PROMPTS[page : page + 1], next_cursor=after)


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
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
