"""A handshake-era session belongs to the credential that created it, in memory and in Redis.

Alice opens a session and starts a call that asks her a question. Another caller (Bob with his own
token, or a request with no token at all) sends alice's `Mcp-Session-Id` with every method the
endpoint has: each is 404 as if the session did not exist, and alice's call, stream and session
carry on untouched. Served by uvicorn on 127.0.0.1, behind the app's own auth middleware.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from interop.interop_servers import serve_app
from pydantic import BaseModel
from scale_services import Redis, redis_server
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi import AcceptedElicitation, AccessToken, Context, MCPServer, authenticated
from mcpdi_transport import RedisSessions, build_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

VERSION = "2025-11-25"
NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}


class Name(BaseModel):
    name: str


def server() -> MCPServer:
    mcp = MCPServer("Greeter")

    @mcp.tool()
    async def greet(ctx: Context) -> str:
        """Ask for a name, then greet it."""
        answer = await ctx.elicit("Your name?", Name)
        return f"Hi, {answer.data.name}!" if isinstance(answer, AcceptedElicitation) else answer.action

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    return mcp


class OptionalBearer:
    """The app's own auth: `Authorization: Bearer NAME` runs the request as NAME; no header, as nobody."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = dict(scope.get("headers", [])).get(b"authorization", b"").decode()
        if scope["type"] != "http" or not header.startswith("Bearer "):
            await self.app(scope, receive, send)
            return
        with authenticated(AccessToken(token=header[7:], client_id=header[7:], scopes=[])):
            await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    served: Redis
    with redis_server() as served:
        yield served.url


def headers(session_id: str | None, token: str | None, **extra: str) -> dict[str, str]:
    sent = {"accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION, **extra}
    if session_id is not None:
        sent["mcp-session-id"] = session_id
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return sent


def call(id_: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def open_session(client: httpx2.AsyncClient, url: str, token: str) -> str:
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "t", "version": "0"},
    }
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    opened = await client.post(url, json=initialize, headers=headers(None, token))
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(url, json=initialized, headers=headers(session_id, token))).status_code == 202
    return session_id


@pytest.mark.parametrize("store", ["memory", "redis"])
@pytest.mark.parametrize("intruder", ["bob", None], ids=["another token", "no token"])
async def test_every_request_on_a_session_with_another_credential_is_404(
    request: pytest.FixtureRequest, store: str, intruder: str | None
) -> None:
    sessions = RedisSessions(request.getfixturevalue("redis_url")) if store == "redis" else None
    app = OptionalBearer(build_http_app(server(), sessions=sessions))
    async with serve_app(app) as url, httpx2.AsyncClient(timeout=10) as client:
        session_id = await open_session(client, url, "alice")
        alice = headers(session_id, "alice")
        bob = headers(session_id, intruder)

        async def refused(method: str, message: dict[str, Any] | None = None, **extra: str) -> None:
            sent = {**bob, **extra}
            response = await client.request(method, url, json=message, headers=sent)
            assert (response.status_code, response.json()) == (404, NOT_FOUND), method

        async with client.stream("POST", url, json=call(1, "greet"), headers=alice) as stream:
            events = aiter(httpx2.EventSource(stream))
            question: dict[str, Any] = {}
            last_event_id = ""
            with anyio.fail_after(10):
                async for event in events:
                    last_event_id = event.id or last_event_id
                    if event.data:
                        question = json.loads(event.data)
                        break
            assert question["method"] == "elicitation/create"

            await refused("POST", call(2, "echo", {"text": "x"}))
            answer = {"action": "accept", "content": {"name": "Bob"}}
            await refused("POST", {"jsonrpc": "2.0", "id": question["id"], "result": answer})
            await refused("GET", None, **{"last-event-id": last_event_id})
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            await refused("POST", cancel)
            await refused("DELETE")

            own = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            assert (await client.post(url, json=own, headers=alice)).status_code == 202
            with anyio.fail_after(10):
                final = [json.loads(event.data) async for event in events if event.data]
        assert [(message["id"], message["result"]["content"][0]["text"]) for message in final] == [
            (1, "Hi, Ada!")
        ]
        echoed = await client.post(url, json=call(3, "echo", {"text": "still mine"}), headers=alice)
        assert '"still mine"' in echoed.text
        assert (await client.delete(url, headers=alice)).status_code == 200
