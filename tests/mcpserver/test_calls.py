"""tools/call outside the happy path: errors, Context, lifespan, logging, progress, output shapes."""

# pinned error texts are long single-line literals

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel
from typing_extensions import TypedDict

from mcpdi import Context, MCPError, MCPServer, Resolve, ToolError

from .conftest import connect

pytestmark = pytest.mark.anyio


def failing_server() -> MCPServer:
    mcp = MCPServer("Failing")

    def no_stock() -> int:
        raise ToolError("no stock for that title")

    def crash() -> int:
        raise ValueError("secret internals")

    def refuse() -> int:
        raise MCPError(-32042, "go elsewhere", {"where": "x"})

    @mcp.tool()
    def tool_error(n: Annotated[int, Resolve(no_stock)]) -> int:
        return n

    @mcp.tool()
    def value_error(n: Annotated[int, Resolve(crash)]) -> int:
        return n

    @mcp.tool()
    def mcp_error(n: Annotated[int, Resolve(refuse)]) -> int:
        return n

    @mcp.tool()
    def body_tool_error() -> int:
        raise ToolError("the tool failed on purpose")

    @mcp.tool()
    async def body_crash() -> int:
        raise KeyError("secret")

    return mcp


@pytest.mark.parametrize(
    ("tool", "text", "logged"),
    [
        ("tool_error", "Error executing tool tool_error: no stock for that title", None),
        ("value_error", "Error executing tool value_error", "ResolverError"),
        ("body_tool_error", "Error executing tool body_tool_error: the tool failed on purpose", None),
        ("body_crash", "Error executing tool body_crash", "KeyError"),
    ],
)
async def test_failures_reach_the_model_as_tool_errors_without_internals(
    protocol_version: str, tool: str, text: str, logged: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, "mcpdi"):
        async with connect(failing_server(), protocol_version) as client:
            call = await client.call_tool(tool, {})
    assert call.result["isError"] is True
    assert call.result["content"] == [{"type": "text", "text": text}]
    # The model sees no internals; the server log keeps them (a ToolError is the author's own text).
    records = [(r.getMessage(), r.exc_info and type(r.exc_info[1]).__name__) for r in caplog.records]
    assert records == ([] if logged is None else [(f"Error executing tool {tool}", logged)])


async def test_an_mcp_error_from_a_resolver_passes_through(protocol_version: str) -> None:
    async with connect(failing_server(), protocol_version) as client:
        call = await client.call_tool("mcp_error", {})
    assert call.error == {"code": -32042, "message": "go elsewhere", "data": {"where": "x"}}


async def test_an_unknown_tool_is_an_invalid_params_error(protocol_version: str) -> None:
    async with connect(failing_server(), protocol_version) as client:
        call = await client.call_tool("nope", {})
    assert call.error == snapshot({"code": -32602, "message": "Unknown tool: nope"})


class Total(BaseModel):
    total: int


class Pair(TypedDict):
    a: int
    b: str


async def test_structured_results_carry_a_schema_and_a_json_text_block(protocol_version: str) -> None:
    mcp = MCPServer("Shapes")

    @mcp.tool()
    def total() -> Total:
        return Total(total=5)

    @mcp.tool()
    def pair() -> Pair:
        return {"a": 1, "b": "x"}

    @mcp.tool()
    def numbers() -> list[int]:
        return [1, 2]

    @mcp.tool()
    def untyped():  # pyright: ignore[reportUnknownParameterType]
        return "plain"

    async with connect(mcp, protocol_version) as client:
        tools = {tool["name"]: tool for tool in (await client.send("tools/list"))["result"]["tools"]}
        total_call = await client.call_tool("total", {})
        pair_call = await client.call_tool("pair", {})
        numbers_call = await client.call_tool("numbers", {})
        untyped_call = await client.call_tool("untyped", {})
    assert tools["total"]["outputSchema"] == {
        "properties": {"total": {"title": "Total", "type": "integer"}},
        "required": ["total"],
        "title": "Total",
        "type": "object",
    }
    assert total_call.result["structuredContent"] == {"total": 5}
    assert total_call.text == '{\n  "total": 5\n}'
    assert pair_call.result["structuredContent"] == {"a": 1, "b": "x"}
    assert numbers_call.result["structuredContent"] == {"result": [1, 2]}
    assert [block["text"] for block in numbers_call.result["content"]] == ["1", "2"]
    assert "outputSchema" not in tools["untyped"]
    assert untyped_call.result == {
        "content": [{"type": "text", "text": "plain"}],
        **_complete(protocol_version),
    }


def _complete(protocol_version: str) -> dict[str, Any]:
    if protocol_version >= "2026-07-28":
        return {
            "isError": False,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "Shapes", "version": ""}},
        }
    return {"isError": False}


async def test_the_resolver_and_the_body_share_one_context_with_headers_and_lifespan(
    protocol_version: str,
) -> None:
    @asynccontextmanager
    async def lifespan(server: MCPServer[dict[str, str]]) -> AsyncGenerator[dict[str, str]]:
        yield {"db": "books.sqlite"}

    mcp = MCPServer("Ctx", lifespan=lifespan)
    seen: list[Context] = []

    def region(ctx: Context) -> str:
        seen.append(ctx)
        headers = ctx.headers or {}
        return headers.get("x-region", "none")

    @mcp.tool()
    def where(ctx: Context[dict[str, str]], at: Annotated[str, Resolve(region)]) -> str:
        seen.append(ctx)
        info = ctx.client_info.name if ctx.client_info else "?"
        assert ctx.request_context.lifespan_context is ctx.lifespan
        return f"{at} {ctx.lifespan['db']} {ctx.protocol_version} {info} {ctx.era}"

    async with connect(mcp, protocol_version, headers={"x-region": "eu"}) as client:
        call = await client.call_tool("where", {"ctx": "ignored"})
    era = "modern" if protocol_version >= "2026-07-28" else "legacy"
    assert call.text == f"eu books.sqlite {protocol_version} in-memory {era}"
    assert len(seen) == 2
    assert seen[0] is seen[1]


async def test_headers_are_none_off_http(protocol_version: str) -> None:
    mcp = MCPServer("Ctx")

    @mcp.tool()
    def headers(ctx: Context) -> str:
        return repr(ctx.headers)

    async with connect(mcp, protocol_version) as client:
        call = await client.call_tool("headers", {})
    assert call.text == "None"


async def test_logging_and_progress_reach_the_client_when_asked_for(protocol_version: str) -> None:
    mcp = MCPServer("Ctx")

    @mcp.tool()
    async def work(ctx: Context) -> str:
        await ctx.info("starting")
        await ctx.report_progress(1, 2, "half")
        return "done"

    meta = {"progressToken": "p1", "io.modelcontextprotocol/logLevel": "info"}
    async with connect(mcp, protocol_version) as client:
        answer = await client.send("tools/call", {"name": "work", "arguments": {}, "_meta": meta})
        notes = client.peer.notifications
    assert answer["result"]["content"][0]["text"] == "done"
    assert ("notifications/message", {"level": "info", "data": "starting"}) in notes
    assert (
        "notifications/progress",
        {"progressToken": "p1", "progress": 1, "total": 2, "message": "half"},
    ) in notes
    (progress,) = [params for method, params in notes if method == "notifications/progress"]
    assert json.dumps(progress) == '{"progressToken": "p1", "progress": 1.0, "total": 2.0, "message": "half"}'


def test_the_tool_decorator_needs_parentheses() -> None:
    mcp = MCPServer("Deco")
    with pytest.raises(TypeError, match=r"write @mcp.tool\(\) with parentheses"):
        mcp.tool(lambda: None)  # type: ignore[arg-type]
