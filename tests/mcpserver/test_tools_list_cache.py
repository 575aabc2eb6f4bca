"""`tools/list` is dumped and sieved once per protocol version, until the tools change."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from mcpdi import MCPServer, Middleware, Resolve

from .conftest import connect

pytestmark = pytest.mark.anyio


class Shelf(BaseModel):
    row: int


async def _row() -> int:
    return 1


async def _other_row() -> int:
    return 2


def _server() -> MCPServer:
    mcp = MCPServer("Cache")

    @mcp.tool()
    async def shelve(title: str, row: Annotated[int, Resolve(_row)]) -> Shelf:
        """Put a book on a shelf."""
        return Shelf(row=row)

    return mcp


async def _listed(client: Any) -> dict[str, dict[str, Any]]:
    answer = await client.send("tools/list")
    return {tool["name"]: tool for tool in answer["result"]["tools"]}


async def test_a_tool_added_or_removed_shows_in_the_next_list(protocol_version: str) -> None:
    mcp = _server()
    async with connect(mcp, protocol_version) as client:
        assert set(await _listed(client)) == {"shelve"}
        assert set(await _listed(client)) == {"shelve"}

        @mcp.tool()
        async def fetch(title: str) -> str:
            return title

        assert set(await _listed(client)) == {"shelve", "fetch"}
        mcp.remove_tool("shelve")
        assert set(await _listed(client)) == {"fetch"}
        mcp.remove_tool("fetch")
        assert await _listed(client) == {}


async def test_an_override_lists_its_tools_anew_and_restores_them(protocol_version: str) -> None:
    mcp = _server()
    async with connect(mcp, protocol_version) as client:
        before = await _listed(client)
        with mcp.override(_row, _other_row):
            assert await _listed(client) == before
            call = {"name": "shelve", "arguments": {"title": "Dune"}}
            assert (await client.send("tools/call", call))["result"]["structuredContent"] == {"row": 2}
        assert await _listed(client) == before
        assert (await client.send("tools/call", call))["result"]["structuredContent"] == {"row": 1}


class _PassThrough(Middleware):
    """Sends tools/list down the handler path that dumps and sieves on every request."""

    async def on_list_tools(self, ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)


async def test_every_version_gets_the_answer_an_uncached_list_gives() -> None:
    cached, uncached = _server(), _server()
    uncached.add_middleware(_PassThrough())
    versions = ("2025-03-26", "2025-11-25", "2026-07-28")
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            (
                await stack.enter_async_context(connect(cached, v)),
                await stack.enter_async_context(connect(uncached, v)),
            )
            for v in versions
        ]
        for _ in range(2):  # the second pass answers from what the first kept
            for mine, reference in clients:
                answer, expected = await mine.send("tools/list"), await reference.send("tools/list")
                assert answer["result"] == expected["result"]


async def test_changing_an_answer_leaves_the_next_one_whole(protocol_version: str) -> None:
    mcp = _server()
    async with connect(mcp, protocol_version) as client:
        first = await client.send("tools/list")
        first["result"]["tools"].clear()
        first["result"]["tools"].append({"name": "intruder"})
        second = await client.send("tools/list")
        assert [tool["name"] for tool in second["result"]["tools"]] == ["shelve"]


async def test_with_middleware_the_list_runs_through_it_every_time(protocol_version: str) -> None:
    seen: list[str] = []

    class Count(Middleware):
        async def on_list_tools(self, ctx: Any, call_next: Any) -> Any:
            seen.append("tools/list")
            return await call_next(ctx)

    mcp = MCPServer("Cache", middleware=[Count()])

    @mcp.tool()
    async def fetch(title: str) -> str:
        return title

    async with connect(mcp, protocol_version) as client:
        assert set(await _listed(client)) == {"fetch"}
        assert set(await _listed(client)) == {"fetch"}
    assert seen == ["tools/list", "tools/list"]
