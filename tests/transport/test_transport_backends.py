"""The HTTP app and the core run on both of anyio's backends, asyncio and trio, as anyio claims."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from transport_asgi import MODERN_META, http_client, initialize_body, modern_headers
from transport_sample_server import server

from mcpdi import Elicit, MCPServer, Resolve
from mcpdi_transport import build_http_app

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def call(id_: int, name: str, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": MODERN_META, **extra}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def test_a_modern_round_and_its_retry_complete() -> None:
    async with http_client(build_http_app(server)) as client:
        headers = modern_headers("tools/call", "greet")
        first = (await client.post("/mcp", json=call(1, "greet"), headers=headers)).json()["result"]
        assert first["resultType"] == "input_required"
        retry = call(
            2,
            "greet",
            inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
            requestState=first["requestState"],
        )
        second = (await client.post("/mcp", json=retry, headers=headers)).json()
    assert second["result"]["content"] == [{"type": "text", "text": "Hi, Ada!"}]


async def test_a_handshake_session_starts_and_answers_a_call() -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with http_client(build_http_app(server, json_response=True)) as client:
        opened = await client.post("/mcp", json=initialize_body(), headers=headers)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        echoed = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi"}},
            },
            headers=headers | session,
        )
    assert echoed.json()["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_an_mcp_server_asks_and_finishes_in_memory() -> None:
    from pydantic import BaseModel

    class Name(BaseModel):
        name: str

    def ask() -> Elicit[Name]:
        return Elicit("Name?", Name)

    mcp = MCPServer("Backends")

    @mcp.tool()
    async def hello(who: Annotated[Name, Resolve(ask)]) -> str:
        return f"Hello {who.name}"

    for version in ("2025-11-25", "2026-07-28"):
        result = await mcp.call_tool(
            "hello", answers={ask: {"action": "accept", "content": {"name": "Bo"}}}, protocol_version=version
        )
        assert result.structured_content == {"result": "Hello Bo"}
