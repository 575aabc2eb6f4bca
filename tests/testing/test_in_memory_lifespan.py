"""`mcp.call_tool` keeps one runner open: the lifespan runs once per server, not once per call."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import anyio
import pytest

from mcpdi import Context, MCPServer, Resolve

pytestmark = pytest.mark.anyio


def shop() -> tuple[MCPServer[sqlite3.Connection], list[str]]:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(server: MCPServer[sqlite3.Connection]) -> AsyncIterator[sqlite3.Connection]:
        events.append("open")
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute("create table books (title text)")
        try:
            yield db
        finally:
            db.close()
            events.append("close")

    mcp: MCPServer[sqlite3.Connection] = MCPServer("Shop", lifespan=lifespan)

    def database(ctx: Context[sqlite3.Connection]) -> sqlite3.Connection:
        return ctx.lifespan

    @mcp.tool()
    def add_book(title: str, db: Annotated[sqlite3.Connection, Resolve(database)]) -> int:
        db.execute("insert into books values (?)", (title,))
        return db.execute("select count(*) from books").fetchone()[0]

    return mcp, events


async def test_a_memory_database_opened_in_the_lifespan_survives_between_calls(
    protocol_version: str,
) -> None:
    mcp, events = shop()
    async with mcp:
        for title in ("Dune", "Emma", "Ulysses"):
            result = await mcp.call_tool("add_book", {"title": title}, protocol_version=protocol_version)
        assert events == ["open"]
    assert result.structured_content == {"result": 3}
    assert events == ["open", "close"]


async def test_the_lifespan_is_entered_on_first_use_and_left_by_aclose() -> None:
    mcp, events = shop()
    assert events == []
    await mcp.call_tool("add_book", {"title": "Dune"})
    await mcp.call_tool("add_book", {"title": "Emma"})
    assert events == ["open"]
    await mcp.aclose()
    assert events == ["open", "close"]
    again = await mcp.call_tool("add_book", {"title": "Dune"})
    assert again.structured_content == {"result": 1}  # a new lifespan, a new database
    await mcp.aclose()
    assert events == ["open", "close", "open", "close"]


async def test_aclose_without_a_call_does_nothing() -> None:
    mcp, events = shop()
    await mcp.aclose()
    assert events == []


def test_a_loop_that_ends_without_aclose_still_runs_the_cleanup() -> None:
    mcp, events = shop()

    async def main() -> None:
        await mcp.call_tool("add_book", {"title": "Dune"})

    asyncio.run(main())
    assert events == ["open", "close"]


async def test_a_lifespan_with_a_task_group_serves_many_calls() -> None:
    started: list[str] = []

    @asynccontextmanager
    async def lifespan(server: MCPServer[list[str]]) -> AsyncIterator[list[str]]:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: anyio.sleep_forever())
            started.append("up")
            yield started
            group.cancel_scope.cancel()

    mcp: MCPServer[list[str]] = MCPServer("Tasks", lifespan=lifespan)

    @mcp.tool()
    def count(ctx: Context[list[str]]) -> int:
        return len(ctx.lifespan)

    async with mcp:
        for _ in range(3):
            assert (await mcp.call_tool("count")).structured_content == {"result": 1}
    assert started == ["up"]


async def test_a_lifespan_that_fails_to_start_raises_at_the_call() -> None:
    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield

    mcp = MCPServer("Broken", lifespan=lifespan)

    @mcp.tool()
    def ping() -> str:
        return "pong"

    with pytest.raises(RuntimeError, match="no database"):
        await mcp.call_tool("ping")
