"""In-memory calls with a principal: scoped tools and token-bound state tested without HTTP."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from mcpdi import AccessToken, Elicit, MCPError, MCPServer, Resolve, get_access_token
from mcpdi.testing import ScriptedClient, accept

pytestmark = pytest.mark.anyio

READER = AccessToken(token="r", client_id="app", scopes=["books:read"], subject="alice")
NOBODY = AccessToken(token="n", client_id="app", scopes=[], subject="bob")


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def library() -> MCPServer:
    mcp = MCPServer("Library")

    @mcp.tool(required_scopes=["books:read"])
    def read(title: str, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
        token = get_access_token()
        return f"{token.subject if token else None} reads {title}: {sure.ok}"

    return mcp


async def test_call_tool_runs_as_the_principal_it_is_given() -> None:
    mcp = library()
    result = await mcp.call_tool(
        "read",
        {"title": "Dune"},
        answers={confirm: {"action": "accept", "content": {"ok": True}}},
        principal=READER,
    )
    assert result.structured_content == {"result": "alice reads Dune: True"}


@pytest.mark.parametrize("principal", [None, NOBODY], ids=["no token", "token without the scope"])
async def test_call_tool_refuses_a_scoped_tool_to_a_principal_without_the_scope(
    principal: AccessToken | None,
) -> None:
    with pytest.raises(MCPError) as refused:
        await library().call_tool(
            "read",
            {"title": "Dune"},
            answers={confirm: {"action": "accept", "content": {"ok": True}}},
            principal=principal,
        )
    assert refused.value.code == -32003
    assert refused.value.message == "Tool 'read' needs the scopes books:read, which the access token lacks"


@pytest.mark.parametrize("protocol_version", ["2026-07-28", "2025-11-25"])
async def test_a_scripted_client_runs_every_round_as_its_principal(protocol_version: str) -> None:
    client = ScriptedClient(library(), protocol_version=protocol_version, principal=READER)
    client.answer(confirm, accept(ok=True))
    result = await client.call_tool("read", {"title": "Dune"})
    assert result.structured_content == {"result": "alice reads Dune: True"}
    assert [question.method for question in client.questions] == ["elicitation/create"]
