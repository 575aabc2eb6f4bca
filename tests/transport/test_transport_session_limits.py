"""Handshake-era sessions under abuse: questions time out, abandoned sessions go, buffers are capped."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from inline_snapshot import snapshot
from transport_asgi import LEGACY_HEADERS, http_client, initialize_body, streaming, uvicorn_serving
from transport_asgi import open_legacy_session as open_session
from transport_sample_server import server

from mcpdi import AccessToken, AuthSettings
from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._http._registry import LocalSessions
from mcpdi_transport._http._sse import ByteBudget, EventStream

pytestmark = pytest.mark.anyio


def call(id_: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def local_sessions(app: Any) -> LocalSessions:
    return app.routes[0].endpoint.legacy.sessions


async def ask_and_walk_away(app: Any, headers: dict[str, str], id_: int) -> None:
    """Call `greet`, read its question, and close the connection without answering."""
    async with streaming(app, "POST", headers, call(id_, "greet")) as exchange:
        with anyio.fail_after(5):
            question = await exchange.next_message()
    assert question["method"] == "elicitation/create"


async def test_an_unanswered_question_fails_its_call_with_a_timeout_and_tells_the_client() -> None:
    app = build_http_app(server, client_request_timeout=0.2)
    async with http_client(app) as client:
        headers = await open_session(client)
        with anyio.fail_after(10):
            answered = await client.post("/mcp", json=call(2, "greet"), headers=headers)
    messages = [json.loads(line[6:]) for line in answered.text.split("\r\n") if line.startswith("data: {")]
    question, cancelled, failed = messages
    assert question["method"] == "elicitation/create"
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": question["id"], "reason": "timed out"},
    }
    assert failed == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32001, "message": "The client did not answer 'elicitation/create' within 0.2 s"},
    }


async def test_a_session_whose_client_left_a_question_unanswered_expires_while_its_call_still_waits() -> None:
    app = build_http_app(server, session_idle_timeout=0.2)
    async with http_client(app) as client:
        headers = await open_session(client)
        await ask_and_walk_away(app, headers, 2)
        sessions = local_sessions(app)
        session = sessions.by_id[headers["mcp-session-id"]]
        assert session.running  # the call still waits for its answer
        with anyio.fail_after(5):
            while headers["mcp-session-id"] in sessions.by_id:
                await anyio.sleep(0.05)
        gone = await client.post("/mcp", json=call(3, "echo", {"text": "x"}), headers=headers)
    assert gone.status_code == 404
    assert not session.running  # ending the session cancelled the waiting call


async def test_a_full_house_of_abandoned_questions_does_not_lock_out_new_clients() -> None:
    app = build_http_app(server, max_sessions=3)
    async with http_client(app) as client:
        abandoned = [await open_session(client) for _ in range(3)]
        for number, headers in enumerate(abandoned):
            await ask_and_walk_away(app, headers, 10 + number)
        newcomers = [
            await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS) for _ in range(5)
        ]
        sessions = local_sessions(app)
        assert len(sessions.by_id) == 3
        first_gone = await client.post("/mcp", json=call(3, "echo", {"text": "x"}), headers=abandoned[0])
    assert [response.status_code for response in newcomers] == [200] * 5
    assert first_gone.status_code == 404


async def test_a_client_that_never_reads_cannot_make_a_session_hold_more_than_its_byte_budget() -> None:
    budget = 16 * 1024
    app = build_http_app(server, max_buffered_bytes=budget)
    async with http_client(app) as client:
        headers = await open_session(client)
        for number in range(40):
            body = call(100 + number, "echo", {"text": "x" * 2000})
            async with streaming(app, "POST", headers, body) as exchange:
                with anyio.fail_after(5):
                    await exchange.started.wait()
        session = local_sessions(app).by_id[headers["mcp-session-id"]]
        held = sum(stream.buffered_bytes for stream in session.streams.values())
        assert session.budget.used == held
        assert 0 < held <= budget
        still_served = await client.post("/mcp", json=call(999, "echo", {"text": "y"}), headers=headers)
    assert still_served.status_code == 200


def test_the_budget_drops_the_oldest_events_first_and_keeps_the_newest_answer() -> None:
    budget = ByteBudget(300)
    older = EventStream("1", resumable=True, budget=budget)
    newer = EventStream("2", resumable=True, budget=budget)
    older.append({"jsonrpc": "2.0", "method": "a", "params": {"pad": "x" * 100}})
    newer.append({"jsonrpc": "2.0", "method": "b", "params": {"pad": "x" * 100}})
    newer.append({"jsonrpc": "2.0", "id": 1, "result": {"pad": "x" * 400}})
    assert older.buffered_bytes == 0
    assert newer.buffered_bytes == budget.used
    # Resuming after a dropped event starts at the oldest one kept: the answer still arrives.
    assert newer.position_after("2-0") == 1
    assert newer.position_after("2-2") is None  # not written yet


async def test_a_reader_behind_dropped_events_skips_to_the_oldest_one_kept() -> None:
    stream = EventStream("1", resumable=True, budget=ByteBudget(10_000))
    for number in range(3):
        stream.append({"jsonrpc": "2.0", "method": "n", "params": {"n": number}})
    assert stream.drop_oldest()
    stream.close()
    frames = [frame async for frame in stream.follow(0)]
    assert [frame.split(b"\r\n")[0] for frame in frames] == [b"id: 1-1", b"id: 1-2"]


def client_from(address: str, port: int) -> httpx2.AsyncClient:
    """A client whose connections come from `address` (any 127.x.y.z is this machine)."""
    transport = httpx2.AsyncHTTPTransport(local_address=address)
    return httpx2.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{port}", timeout=10)


@pytest.mark.slow
async def test_a_peer_at_its_session_cap_is_refused_while_other_peers_open_theirs() -> None:
    async with (
        uvicorn_serving(server, max_sessions_per_peer=3) as port,
        client_from("127.0.0.2", port) as greedy,
        client_from("127.0.0.3", port) as other,
    ):
        held = [await open_session(greedy) for _ in range(3)]
        refused = await greedy.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
        others = [await open_session(other) for _ in range(3)]
        assert (await greedy.delete("/mcp", headers=held[0])).status_code == 200
        again = await greedy.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
    assert refused.status_code == 429
    assert refused.json()["error"] == snapshot(
        {
            "code": -32600,
            "message": "Too many open sessions for this client (max_sessions_per_peer=3); "
            "end one with DELETE or try again later",
        }
    )
    assert len({headers["mcp-session-id"] for headers in others}) == 3
    assert again.status_code == 200


@pytest.mark.slow
async def test_a_peer_filling_the_session_table_ends_its_own_sessions_not_another_peer_s() -> None:
    async with (
        uvicorn_serving(server, max_sessions=4) as port,
        client_from("127.0.0.2", port) as greedy,
        client_from("127.0.0.3", port) as other,
    ):
        kept = await open_session(other)
        greedy_sessions = [await open_session(greedy) for _ in range(10)]
        served = await other.post("/mcp", json=call(2, "echo", {"text": "still here"}), headers=kept)
        newest = await greedy.post("/mcp", json=call(3, "echo", {"text": "x"}), headers=greedy_sessions[-1])
        oldest = await greedy.post("/mcp", json=call(4, "echo", {"text": "x"}), headers=greedy_sessions[0])
    assert served.status_code == 200
    assert "still here" in served.text
    assert (newest.status_code, oldest.status_code) == (200, 404)


class NamedTokens:
    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id=token, scopes=[])


async def test_with_bearer_auth_each_principal_has_its_own_share_whatever_its_address() -> None:
    auth = AuthSettings(issuer_url="https://auth.example")
    app = build_http_app(server, token_verifier=NamedTokens(), auth=auth, max_sessions_per_peer=2)
    async with http_client(app) as client:
        statuses: dict[str, list[int]] = {}
        for name in ("ada", "bo"):
            sent = {**LEGACY_HEADERS, "authorization": f"Bearer {name}"}
            statuses[name] = [
                (await client.post("/mcp", json=initialize_body(), headers=sent)).status_code
                for _ in range(3)
            ]
    assert statuses == {"ada": [200, 200, 429], "bo": [200, 200, 429]}
