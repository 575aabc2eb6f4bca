"""`MCPServer.call_tool`: tests drive asking tools without a client, in both eras."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from mcpdi import Elicit, MCPError, MCPServer, Resolve

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def server() -> MCPServer:
    mcp = MCPServer("Memory")

    @mcp.tool()
    def act(what: str, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
        return f"{what}: {sure.ok}"

    return mcp


def accept_if_asked_sure(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": params["message"] == "Sure?"}}


ANSWERS: list[dict[Any, Any]] = [
    {confirm: {"action": "accept", "content": {"ok": True}}},
    {"elicitation/create": {"action": "accept", "content": {"ok": True}}},
    {confirm: accept_if_asked_sure},
]


@pytest.mark.parametrize("answers", ANSWERS)
async def test_call_tool_answers_questions_by_resolver_or_method(protocol_version: str, answers: Any) -> None:
    result = await server().call_tool(
        "act", {"what": "ship"}, answers=answers, protocol_version=protocol_version
    )
    assert result.structured_content == {"result": "ship: True"}


async def test_call_tool_raises_protocol_errors() -> None:
    with pytest.raises(MCPError, match="Unknown tool: nope"):
        await server().call_tool("nope")
