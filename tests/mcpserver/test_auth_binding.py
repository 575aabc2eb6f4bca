"""The verified caller is who `requestState` is sealed to, and what tools and resolvers can read."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from mcpdi import (
    AccessToken,
    AuthSettings,
    Context,
    Elicit,
    MCPServer,
    Resolve,
    authenticated,
    get_access_token,
)

from .conftest import connect

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def caller(ctx: Context) -> str:
    token = ctx.access_token
    return "anonymous" if token is None else token.client_id


def shop() -> MCPServer:
    mcp = MCPServer("Shop")

    @mcp.tool()
    def buy(
        title: str, sure: Annotated[Confirm, Resolve(confirm)], who: Annotated[str, Resolve(caller)]
    ) -> str:
        return f"{who} bought {title}: {sure.ok}"

    return mcp


ALICE = AccessToken(token="a", client_id="app-1", scopes=[], subject="alice")
MALLORY = AccessToken(token="m", client_id="app-1", scopes=[], subject="mallory")


async def test_request_state_sealed_for_one_caller_is_refused_for_another() -> None:
    async with connect(shop(), "2026-07-28") as client:
        with authenticated(ALICE):
            first = await client.send("tools/call", {"name": "buy", "arguments": {"title": "Dune"}})
        (key,) = first["result"]["inputRequests"]
        retry = {
            "name": "buy",
            "arguments": {"title": "Dune"},
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["result"]["requestState"],
        }
        with authenticated(MALLORY):
            stolen = await client.send("tools/call", retry)
        with authenticated(ALICE):
            own = await client.send("tools/call", retry)
    assert stolen["error"]["code"] == -32602
    assert stolen["error"]["message"] == "Invalid or expired requestState"
    assert own["result"]["content"][0]["text"] == "app-1 bought Dune: True"


async def test_the_token_is_visible_to_resolvers_and_tools_only_while_authenticated() -> None:
    assert get_access_token() is None
    with authenticated(ALICE):
        assert get_access_token() is ALICE
    assert get_access_token() is None


def test_validating_the_resource_needs_the_resource_url() -> None:
    with pytest.raises(ValueError, match="needs resource_server_url="):
        AuthSettings(issuer_url="https://auth.example.com", validate_token_resource=True)
    with pytest.raises(ValueError, match="must be an http"):
        AuthSettings(issuer_url="auth.example.com")
