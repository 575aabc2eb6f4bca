"""Middleware sees every request (method, tool, arguments, result or error) and may answer itself."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from mcp_types import CallToolResult, TextContent

from mcpdi import CallNext, MCPError, MCPServer, Middleware, MiddlewareContext, ToolError

from .conftest import connect

pytestmark = pytest.mark.anyio


def shop(**options: Any) -> MCPServer:
    mcp = MCPServer("Shop", **options)

    @mcp.tool()
    def buy(title: str, copies: int = 1) -> str:
        if copies > 3:
            raise ToolError("at most 3 copies")
        return f"bought {copies} x {title}"

    @mcp.resource("shop://hours")
    def hours() -> str:
        return "9-5"

    return mcp


async def test_middleware_sees_method_tool_arguments_and_result_outermost_first(
    protocol_version: str,
) -> None:
    seen: list[Any] = []

    def recorder(label: str) -> Any:
        async def record(ctx: MiddlewareContext, call_next: CallNext) -> Any:
            seen.append((label, "in", ctx.method, ctx.tool, ctx.arguments))
            result = await call_next(ctx)
            seen.append((label, "out", type(result).__name__))
            return result

        return record

    mcp = shop(middleware=[recorder("outer")])
    mcp.middleware.append(recorder("inner"))
    async with connect(mcp, protocol_version) as client:
        await client.request("tools/list")
        exchange = await client.call_tool("buy", {"title": "Dune"})
    assert exchange.text == "bought 1 x Dune"
    assert seen == [
        ("outer", "in", "tools/list", None, None),
        ("inner", "in", "tools/list", None, None),
        ("inner", "out", "ListToolsResult"),
        ("outer", "out", "ListToolsResult"),
        ("outer", "in", "tools/call", "buy", {"title": "Dune"}),
        ("inner", "in", "tools/call", "buy", {"title": "Dune"}),
        ("inner", "out", "CallToolResult"),
        ("outer", "out", "CallToolResult"),
    ]


async def test_middleware_sees_tool_errors_as_results_and_protocol_errors_as_exceptions(
    protocol_version: str,
) -> None:
    seen: list[Any] = []

    async def observe(ctx: MiddlewareContext, call_next: CallNext) -> Any:
        try:
            result = await call_next(ctx)
        except MCPError as error:
            seen.append(("error", error.code, error.message))
            raise
        seen.append(("result", result.is_error))
        return result

    mcp = shop(middleware=[observe])
    async with connect(mcp, protocol_version) as client:
        refused = await client.call_tool("buy", {"title": "Dune", "copies": 9})
        unknown = await client.call_tool("steal", {})
    assert refused.text == "Error executing tool buy: at most 3 copies"
    assert unknown.error["code"] == -32602
    assert seen == [("result", True), ("error", -32602, "Unknown tool: steal")]


async def test_middleware_may_refuse_before_the_tool_runs(protocol_version: str) -> None:
    ran: list[str] = []
    mcp = MCPServer("Guarded")

    @mcp.tool()
    def delete_everything() -> str:
        ran.append("tool")
        return "deleted"

    async def guard(ctx: MiddlewareContext, call_next: CallNext) -> Any:
        if ctx.tool == "delete_everything":
            raise MCPError(-32001, "This tool is disabled", {"tool": ctx.tool})
        return await call_next(ctx)

    async def soft_guard(ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return CallToolResult(content=[TextContent(type="text", text="not today")], is_error=True)

    mcp.add_middleware(guard)
    async with connect(mcp, protocol_version) as client:
        refused = await client.call_tool("delete_everything", {})
    assert refused.error == {
        "code": -32001,
        "message": "This tool is disabled",
        "data": {"tool": "delete_everything"},
    }
    mcp.middleware[:] = [soft_guard]
    async with connect(mcp, protocol_version) as client:
        softly = await client.call_tool("delete_everything", {})
    assert (softly.text, softly.result["isError"]) == ("not today", True)
    assert ran == []


async def test_middleware_may_rewrite_the_arguments(protocol_version: str) -> None:
    async def one_copy_only(ctx: MiddlewareContext, call_next: CallNext) -> Any:
        if ctx.tool == "buy":
            params = ctx.params.model_copy(update={"arguments": {**(ctx.arguments or {}), "copies": 1}})
            ctx = dataclasses.replace(ctx, params=params)
        return await call_next(ctx)

    async with connect(shop(middleware=[one_copy_only]), protocol_version) as client:
        exchange = await client.call_tool("buy", {"title": "Emma", "copies": 9})
    assert exchange.text == "bought 1 x Emma"


class Audit(Middleware):
    """fastmcp's shape: one hook for every request, one per method."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    async def on_request(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        self.lines.append(f"request {ctx.method}")
        return await call_next(ctx)

    async def on_call_tool(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        self.lines.append(f"tool {ctx.tool} error={result.is_error}")
        return result

    async def on_read_resource(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        self.lines.append(f"read {ctx.uri}")
        return await call_next(ctx)


async def test_a_middleware_class_gets_a_hook_per_method(protocol_version: str) -> None:
    audit = Audit()
    mcp = shop()
    mcp.add_middleware(audit)
    async with connect(mcp, protocol_version) as client:
        await client.call_tool("buy", {"title": "Dune"})
        await client.request("resources/read", {"uri": "shop://hours"})
        await client.request("resources/list")
    assert audit.lines == [
        "request tools/call",
        "tool buy error=False",
        "request resources/read",
        "read shop://hours",
        "request resources/list",
    ]


def test_add_middleware_refuses_what_cannot_be_called() -> None:
    with pytest.raises(TypeError, match="middleware is a callable"):
        MCPServer().add_middleware("audit")  # pyright: ignore[reportArgumentType]
