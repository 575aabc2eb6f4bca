"""A low-level server the transport tests drive over stdio and HTTP (both eras)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import mcp_types as types

from mcpdi.lowlevel import Server, ServerRequestContext

NAME_QUESTION: dict[str, Any] = {
    "mode": "form",
    "message": "What is your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}

TOOLS = {
    "echo": types.Tool(
        name="echo",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    "greet": types.Tool(name="greet", input_schema={"type": "object"}),
    "slow": types.Tool(name="slow", input_schema={"type": "object"}),
    "sleep": types.Tool(name="sleep", input_schema={"type": "object"}),
    "shout": types.Tool(name="shout", input_schema={"type": "object"}),
    "reconnect": types.Tool(name="reconnect", input_schema={"type": "object"}),
    "huge": types.Tool(name="huge", input_schema={"type": "object"}),
    "surrogate": types.Tool(name="surrogate", input_schema={"type": "object"}),
    "block": types.Tool(name="block", input_schema={"type": "object"}),
    "query": types.Tool(
        name="query",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}},
            "required": ["region", "q"],
        },
    ),
}


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=list(TOOLS.values()))


async def greet(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    if ctx.era == "legacy":
        answer = await ctx.send_request("elicitation/create", NAME_QUESTION)
        return text(f"Hi, {answer['content']['name']}!")
    responses = params.input_responses or {}
    if "name" not in responses or params.request_state != "asked-once":
        return types.InputRequiredResult(
            input_requests={"name": {"method": "elicitation/create", "params": NAME_QUESTION}},  # pyright: ignore[reportArgumentType]  # wire dicts, validated on the way out
            request_state="asked-once",
        )
    answer = responses["name"]
    content: Any = answer["content"] if isinstance(answer, dict) else answer.content  # pyright: ignore[reportAttributeAccessIssue]
    return text(f"Hi, {content['name']}!")


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    arguments = params.arguments or {}
    if params.name == "echo":
        return text(str(arguments.get("text", "")))
    if params.name == "greet":
        return await greet(ctx, params)
    if params.name == "slow":
        await ctx.report_progress(1, 2, "step 1")
        await ctx.send_notification("notifications/message", {"level": "info", "data": "halfway"})
        await ctx.report_progress(2, 2, "step 2")
        return text("done")
    if params.name == "sleep":
        await anyio.sleep_forever()
    if params.name == "shout":
        print("a stray print that must not reach the protocol stream")
        return text("shouted")
    if params.name == "reconnect":
        # Ends the client's connection to this call's stream; the client resumes with Last-Event-ID.
        getattr(ctx.peer, "close_sse_stream")()  # noqa: B009 - only the legacy HTTP peer has it
        await anyio.sleep(0.1)
        return text("resumed")
    if params.name == "huge":
        # 5000 digits: Python refuses to turn it into text, so the answer cannot be encoded.
        return types.CallToolResult(content=[], structured_content={"n": 10**5000})
    if params.name == "surrogate":
        return text("half of a pair: \ud800")  # not encodable as UTF-8
    if params.name == "block":
        # A synchronous tool: a worker thread that no cancellation can stop.
        await anyio.to_thread.run_sync(time.sleep, float(arguments.get("seconds", 30)))
        return text("unblocked")
    if params.name == "query":
        return text(f"{arguments['region']}:{arguments['q']}")
    return types.CallToolResult(content=[types.TextContent(type="text", text="no such tool")], is_error=True)


def tool_input_schema(name: str) -> dict[str, Any] | None:
    tool = TOOLS.get(name)
    return tool.input_schema if tool is not None else None


server = Server(
    "transport-sample",
    version="0.1.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    get_tool_input_schema=tool_input_schema,
)
