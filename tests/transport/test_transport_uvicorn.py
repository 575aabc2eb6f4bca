"""Real uvicorn on 127.0.0.1 (a free port): a legacy question over SSE and a modern input round."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx2
import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers
from transport_sample_server import server

from mcpdi_transport._listen import CannotListen, bind_socket
from mcpdi_transport._serve import serve_http

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def running_server() -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        with anyio.fail_after(30):
            port = await group.start(partial(serve_http, server, "127.0.0.1", 0, log_level="warning"))
        yield f"http://127.0.0.1:{port}/mcp"
        group.cancel_scope.cancel()


async def test_a_legacy_question_travels_over_the_call_stream_and_back() -> None:
    async with running_server() as url, httpx2.AsyncClient(timeout=10) as client:
        opened = await client.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
        headers = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        await client.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "greet", "arguments": {}},
        }
        messages: list[dict[str, Any]] = []
        with anyio.fail_after(10):
            async with client.stream("POST", url, json=body, headers=headers) as response:
                assert response.headers["content-type"] == "text/event-stream"
                async for event in httpx2.EventSource(response):
                    if not event.data:
                        continue  # the priming event
                    message = json.loads(event.data)
                    messages.append(message)
                    if message.get("method") == "elicitation/create":
                        answer = {"action": "accept", "content": {"name": "Ada"}}
                        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                        assert (await client.post(url, json=reply, headers=headers)).status_code == 202
        deleted = await client.delete(url, headers=headers)
    assert [message.get("method") for message in messages] == ["elicitation/create", None]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "Hi, Ada!"}]
    assert deleted.status_code == 200


async def test_a_modern_input_required_round_completes_over_the_network() -> None:
    headers = modern_headers("tools/call", "greet")
    first_body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "_meta": MODERN_META},
    }
    async with running_server() as url, httpx2.AsyncClient(timeout=10) as client:
        first = (await client.post(url, json=first_body, headers=headers)).json()["result"]
        retry_params = {
            **first_body["params"],
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": first["requestState"],
        }
        retry = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry_params}
        second = await client.post(url, json=retry, headers=headers)
    assert first["resultType"] == "input_required"
    assert second.status_code == 200
    assert second.json()["result"]["content"] == [{"type": "text", "text": "Hi, Ada!"}]


def test_a_taken_port_is_reported_before_uvicorn_starts() -> None:
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(CannotListen) as caught:
            bind_socket("127.0.0.1", port)
    finally:
        taken.close()
    assert str(caught.value) == f"cannot listen on 127.0.0.1:{port}: address already in use"
