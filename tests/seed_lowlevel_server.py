"""The low-level server examples of seed 001 ("Header-Parameter") as text, and running that text.

The text is the seed's, unchanged apart from its imports (`mcpdi` for the SDK's). Join the parts a
page example is made of and pass them to `run_seed`: `IMPORTS`, `TOOL`, then `HANDLERS` or
`SCHEMA_BY_NAME`.
"""

from __future__ import annotations

from typing import Any

IMPORTS = """
from mcpdi import Server, ServerRequestContext
from mcpdi.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
"""

TOOL = """
CHECK_STOCK = Tool(
    name="check_stock",
    description="Count the copies of a book in one region's warehouses.",
    input_schema={
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "region": {"type": "string", "x-mcp-header": "Region"},
        },
        "required": ["title", "region"],
    },
)
"""

HANDLERS = """
async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult(tools=[CHECK_STOCK])


async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    args = params.arguments or {}
    text = f"{args['title']}: 3 copies in {args['region']}."
    return CallToolResult(content=[TextContent(type="text", text=text)])


server = Server("Bookshop", on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app()
"""

SCHEMA_BY_NAME = """
from typing import Any

TOOLS = {CHECK_STOCK.name: CHECK_STOCK}


async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult(tools=list(TOOLS.values()))


async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    args = params.arguments or {}
    text = f"{args['title']}: 3 copies in {args['region']}."
    return CallToolResult(content=[TextContent(type="text", text=text)])


def tool_input_schema(name: str) -> dict[str, Any] | None:
    tool = TOOLS.get(name)
    return tool.input_schema if tool else None


server = Server(
    "Bookshop",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    get_tool_input_schema=tool_input_schema,
)
app = server.streamable_http_app()
"""


def run_seed(*parts: str) -> dict[str, Any]:
    """Run the joined parts as one file, `seed_001_server.py`, and return its namespace."""
    namespace: dict[str, Any] = {"__name__": "seed_001"}
    exec(compile("\n".join(parts), "seed_001_server.py", "exec"), namespace)
    return namespace
