"""Bearer auth in a ported resource server: the same 401/403 challenges, metadata and token access."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from port_harness import FLAVOURS, MODES, load, serve, text

from mcpdi import AccessToken as McpdiToken
from mcpdi import MCPError, MCPServer, authenticated

pytestmark = pytest.mark.anyio

POST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def refusals(url: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    base = url.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        metadata = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
        seen["metadata"] = {k: metadata[k] for k in ("resource", "authorization_servers", "scopes_supported")}
        for label, token in (("none", None), ("unknown", "forged"), ("narrow", "narrow")):
            headers = dict(HEADERS)
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
            response = await http.post(url, json=POST, headers=headers)
            challenge = response.headers.get("www-authenticate", "")
            seen[label] = (
                response.status_code,
                challenge.split(" ")[0],
                'error="invalid_token"' in challenge,
                'error="insufficient_scope"' in challenge,
                'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' in challenge,
            )
    return seen


async def test_refusals_and_metadata_match_the_sdk() -> None:
    seen: dict[str, Any] = {}
    for flavour in FLAVOURS:
        async with serve(load("bearer_auth", flavour).build().streamable_http_app()) as url:
            seen[flavour] = await refusals(url)
    # Without any token RFC 6750 (3.1) asks for a challenge without an error code; the SDK sends one.
    assert seen["sdk"].pop("none") == (401, "Bearer", True, False, True)
    assert seen["mcpdi"].pop("none") == (401, "Bearer", False, False, True)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["unknown"] == (401, "Bearer", True, False, True)
    assert seen["mcpdi"]["narrow"] == (403, "Bearer", False, True, True)
    assert seen["mcpdi"]["metadata"]["resource"] == "http://127.0.0.1/mcp"
    assert seen["mcpdi"]["metadata"]["scopes_supported"] == ["books:read"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_valid_token_reaches_the_tool(mode: str) -> None:
    seen: dict[str, str] = {}
    for flavour in FLAVOURS:
        async with serve(load("bearer_auth", flavour).build().streamable_http_app()) as url:
            http = httpx2.AsyncClient(headers={"authorization": "Bearer good"})
            async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                seen[flavour] = text(await client.call_tool("whoami", {}))
    assert seen["mcpdi"] == seen["sdk"] == "app-1 ['books:read']"


async def test_a_tool_can_require_its_own_scopes() -> None:
    mcp = MCPServer("Scoped")

    @mcp.tool(required_scopes=["books:write"])
    def restock(title: str) -> str:
        return f"restocked {title}"

    reader = McpdiToken(token="t", client_id="app-1", scopes=["books:read"])
    writer = McpdiToken(token="t", client_id="app-1", scopes=["books:read", "books:write"])
    with authenticated(reader), pytest.raises(MCPError) as refused:
        await mcp.call_tool("restock", {"title": "Dune"})
    assert (refused.value.code, refused.value.data) == (
        -32003,
        {"requiredScopes": ["books:write"], "missing": ["books:write"]},
    )
    assert "needs the scopes books:write" in refused.value.message
    with authenticated(writer):
        result = await mcp.call_tool("restock", {"title": "Dune"})
    assert text(result) == "restocked Dune"
    with pytest.raises(MCPError, match="needs the scopes"):
        await mcp.call_tool("restock", {"title": "Dune"})  # no token at all


def test_auth_needs_both_a_verifier_and_settings() -> None:
    with pytest.raises(ValueError, match="needs both token_verifier= and auth="):
        MCPServer("Half", token_verifier=object())  # pyright: ignore[reportArgumentType]


class Verifier:
    async def verify_token(self, token: str) -> McpdiToken | None:
        tokens = {
            "old": McpdiToken(
                token="old", client_id="c", scopes=["s"], expires_at=1, resource="http://127.0.0.1/mcp"
            ),
            "elsewhere": McpdiToken(
                token="x", client_id="c", scopes=["s"], resource="https://other.example/mcp"
            ),
            "fine": McpdiToken(token="f", client_id="c", scopes=["s"], resource="http://127.0.0.1/mcp"),
        }
        return tokens.get(token)


async def test_expired_tokens_and_tokens_for_another_resource_are_refused() -> None:
    from mcpdi import AuthSettings

    settings = AuthSettings(
        issuer_url="https://auth.example.com",
        resource_server_url="http://127.0.0.1/mcp",
        validate_token_resource=True,
    )
    mcp = MCPServer("Strict", token_verifier=Verifier(), auth=settings)
    statuses: dict[str, int] = {}
    async with serve(mcp.streamable_http_app()) as url, httpx2.AsyncClient() as http:
        for token in ("old", "elsewhere", "fine"):
            headers = {**HEADERS, "authorization": f"Bearer {token}"}
            statuses[token] = (await http.post(url, json=POST, headers=headers)).status_code
    assert statuses["old"] == statuses["elsewhere"] == 401
    assert statuses["fine"] != 401
