"""One client flooding the in-memory replay store over uvicorn on 127.0.0.1: the others keep
their rounds. Clients are told apart by their source address (127.0.0.2, 127.0.0.3)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

import anyio
import httpx2
import pytest
from pydantic import BaseModel
from transport_asgi import MODERN_META, modern_headers

from mcpdi import Elicit, MCPServer, MemoryReplayStore, RequestStateSecurity, Resolve
from mcpdi_transport._serve import serve_http

pytestmark = pytest.mark.anyio

STORE_SIZE = 40


class Sure(BaseModel):
    ok: bool


def sure() -> Elicit[Sure]:
    return Elicit("Sure?", Sure)


def shop() -> MCPServer:
    security = RequestStateSecurity([b"k" * 32], replay_store=MemoryReplayStore(max_entries=STORE_SIZE))
    mcp = MCPServer("Shop", request_state=security)

    @mcp.tool()
    def buy(title: str, confirmed: Annotated[Sure, Resolve(sure)]) -> str:
        return f"bought {title}: {confirmed.ok}"

    return mcp


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        port = await group.start(partial(serve_http, shop(), "127.0.0.1", 0, log_level="warning"))
        yield f"http://127.0.0.1:{port}/mcp"
        group.cancel_scope.cancel()


def client_from(address: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=address), timeout=10)


async def bought(client: httpx2.AsyncClient, url: str) -> dict[str, Any]:
    """One whole call: the first round, then the round answering its question."""
    params: dict[str, Any] = {"name": "buy", "arguments": {"title": "Dune"}, "_meta": MODERN_META}
    headers = modern_headers("tools/call", "buy")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    first = (await client.post(url, json=body, headers=headers)).json()["result"]
    (key,) = first["inputRequests"]
    params |= {"inputResponses": {key: {"action": "accept", "content": {"ok": True}}}}
    params |= {"requestState": first["requestState"]}
    return (await client.post(url, json=body, headers=headers)).json()


async def test_one_client_cannot_fill_the_replay_store_for_the_others(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpdi")
    async with client_from("127.0.0.2") as flooder, client_from("127.0.0.3") as other:
        flooded = [await bought(flooder, url) for _ in range(STORE_SIZE)]
        served = [await bought(other, url) for _ in range(5)]
    refused = [answer for answer in flooded if "error" in answer]
    assert len(flooded) - len(refused) == STORE_SIZE * 3 // 4
    assert {answer["error"]["code"] for answer in refused} == {-32602}
    assert [answer["result"]["content"][0]["text"] for answer in served] == ["bought Dune: True"] * 5
    assert caplog.messages[0] == (
        "requestState replay store: refusing a round of address 127.0.0.2, which holds 30 of its 30 live ids"
    )
