"""Cleanup resolvers in tools: opened once the call can complete, closed when it ends, in both eras."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import Annotated, Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve, RoundOutcome, ToolError

pytestmark = pytest.mark.anyio

ERAS = ("2025-11-25", "2026-07-28")


class Confirm(BaseModel):
    sure: bool


def shop() -> tuple[MCPServer, list[Any]]:
    mcp = MCPServer("Shop")
    log: list[Any] = []

    async def database() -> AsyncGenerator[str, RoundOutcome]:
        log.append("open")
        outcome = yield "db"
        log.append(("close", outcome))

    def confirm() -> Elicit[Confirm]:
        return Elicit("Place the order?", Confirm)

    def audit() -> Generator[str]:
        yield "audit"
        msg = "audit log is full"
        raise ToolError(msg)

    @mcp.tool()
    async def order(
        item: str, ok: Annotated[Confirm, Resolve(confirm)], db: Annotated[str, Resolve(database)]
    ) -> str:
        log.append("body")
        return f"{item} stored in {db}"

    @mcp.tool()
    async def order_early(
        item: str, db: Annotated[str, Resolve(database)], ok: Annotated[Confirm, Resolve(confirm)]
    ) -> str:
        log.append("body")
        return f"{item} stored in {db}"

    @mcp.tool()
    async def audited(item: str, trail: Annotated[str, Resolve(audit)]) -> str:
        return item

    return mcp, log


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("era", ERAS)
async def test_a_cleanup_resolver_opens_once_the_question_is_answered_and_closes_after_the_body(
    era: str,
) -> None:
    mcp, log = shop()
    accept = {"elicitation/create": {"action": "accept", "content": {"sure": True}}}
    result = await mcp.call_tool("order", {"item": "book"}, answers=accept, protocol_version=era)
    assert text_of(result) == "book stored in db"
    assert log == ["open", "body", ("close", RoundOutcome.COMPLETED)]


@pytest.mark.parametrize("era", ERAS)
async def test_a_declined_question_never_opens_the_resource(era: str) -> None:
    mcp, log = shop()
    decline = {"elicitation/create": {"action": "decline"}}
    with pytest.raises(ToolError):
        await mcp.call_tool("order", {"item": "book"}, answers=decline, protocol_version=era)
    assert log == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_cleanup_resolver_before_the_question_opens_before_it_is_asked(era: str) -> None:
    mcp, log = shop()

    def answer(method: str, params: Any) -> Any:
        log.append("asked")
        return {"action": "decline"}

    with pytest.raises(ToolError):
        await mcp.call_tool("order_early", {"item": "book"}, answers=answer, protocol_version=era)
    if era == "2025-11-25":  # one round; the refusal is thrown in at the yield
        assert log == ["open", "asked"]
    else:  # the first round ends with the question, the second with the refusal
        assert log == ["open", ("close", RoundOutcome.SUSPENDED), "asked", "open"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_failing_cleanup_after_a_successful_body_fails_the_call_with_its_reason(era: str) -> None:
    mcp, _ = shop()
    with pytest.raises(ToolError) as failed:
        await mcp.call_tool("audited", {"item": "book"}, protocol_version=era)
    assert str(failed.value) == "Error executing tool audited: audit log is full"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_app_scoped_resource_is_opened_once_for_every_call_and_closed_when_the_server_stops(
    mode: str,
) -> None:
    from mcpdi_transport import Client

    mcp = MCPServer("Pooled")
    log: list[Any] = []

    async def pool() -> AsyncGenerator[str, RoundOutcome]:
        log.append("open pool")
        yield "pool"
        log.append("close pool")

    @mcp.tool()
    async def lookup(title: str, db: Annotated[str, Resolve(pool, scope="app")]) -> str:
        return f"{title} from {db}"

    async with Client(mcp, mode=mode) as client:
        for title in ("Dune", "Emma"):
            result = await client.call_tool("lookup", {"title": title})
            assert text_of(result) == f"{title} from pool"
        assert log == ["open pool"]
    assert log == ["open pool", "close pool"]
