"""The handshake-era HTTP endpoint: sessions, statuses, SSE priming, mid-call questions, resuming."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from inline_snapshot import snapshot
from transport_asgi import LEGACY_HEADERS, http_client, initialize_body, streaming
from transport_sample_server import server

from mcpdi_transport._http._app import build_http_app

pytestmark = pytest.mark.anyio


def call(id_: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def sse_messages(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.split("\r\n") if line.startswith("data: {")]


async def open_session(client: httpx2.AsyncClient, version: str = "2025-11-25") -> dict[str, str]:
    response = await client.post("/mcp", json=initialize_body(version), headers=LEGACY_HEADERS)
    assert response.status_code == 200
    headers = {**LEGACY_HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
    accepted = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert accepted.status_code == 202
    return {**headers, "mcp-protocol-version": version}


@dataclass(frozen=True)
class Session:
    """The endpoint, a client of it, and the headers of one session it opened (initialized)."""

    app: Any
    client: httpx2.AsyncClient
    headers: dict[str, str]


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    app = build_http_app(server)
    async with http_client(app) as client:
        yield Session(app, client, await open_session(client))


async def test_initialize_opens_a_session_and_primes_the_stream_for_resumable_clients() -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=initialize_body("2025-11-25"), headers=LEGACY_HEADERS)
    session_id = response.headers["mcp-session-id"]
    assert len(session_id) == 32
    assert int(session_id, 16) >= 0
    assert response.headers["content-type"] == "text/event-stream"
    priming = response.text.split("\r\n\r\n")[0]
    assert priming == snapshot("id: 1-0\r\nretry: 1000\r\ndata: ")
    assert sse_messages(response.text)[0]["result"]["protocolVersion"] == "2025-11-25"


async def test_older_clients_get_no_priming_event_and_no_event_ids() -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=initialize_body("2025-03-26"), headers=LEGACY_HEADERS)
    assert response.text.startswith("event: message\r\ndata: {")


async def test_requests_in_a_session_are_answered_on_sse(session: Session) -> None:
    response = await session.client.post(
        "/mcp", json=call(2, "echo", {"text": "hi"}), headers=session.headers
    )
    assert response.headers["mcp-session-id"] == session.headers["mcp-session-id"]
    assert sse_messages(response.text) == [
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False}}
    ]


async def test_progress_and_log_notifications_ride_the_request_stream(session: Session) -> None:
    body = call(3, "slow")
    body["params"]["_meta"] = {"progressToken": 7}
    response = await session.client.post("/mcp", json=body, headers=session.headers)
    methods = [message.get("method", "response") for message in sse_messages(response.text)]
    assert methods == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
        "response",
    ]


@pytest.mark.parametrize(
    ("method", "session", "status", "message"),
    [
        ("POST", None, 400, "Bad Request: Missing session ID"),
        ("GET", None, 400, "Bad Request: Missing session ID"),
        ("DELETE", None, 400, "Bad Request: Missing session ID"),
        ("POST", "f" * 32, 404, "Session not found"),
        ("GET", "f" * 32, 404, "Session not found"),
    ],
)
async def test_session_errors_use_the_reference_statuses(
    method: str, session: str | None, status: int, message: str
) -> None:
    headers = dict(LEGACY_HEADERS)
    if session is not None:
        headers["mcp-session-id"] = session
    async with http_client(build_http_app(server)) as client:
        response = await client.request(method, "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
    assert response.status_code == status
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


async def test_delete_ends_the_session(session: Session) -> None:
    deleted = await session.client.delete("/mcp", headers=session.headers)
    after = await session.client.post("/mcp", json=call(2, "echo", {"text": "x"}), headers=session.headers)
    assert (deleted.status_code, deleted.content) == (200, b"")
    assert after.status_code == 404


async def test_unsupported_methods_get_405_naming_the_allowed_ones() -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.put("/mcp", headers=LEGACY_HEADERS)
    assert (response.status_code, response.headers["allow"]) == (405, "GET, POST, DELETE")


@pytest.mark.parametrize(
    ("json_response", "accept", "message"),
    [
        (
            False,
            "application/json",
            "Not Acceptable: Client must accept both application/json and text/event-stream",
        ),
        (True, "text/event-stream", "Not Acceptable: Client must accept application/json"),
    ],
)
async def test_an_unacceptable_accept_header_gets_406(json_response: bool, accept: str, message: str) -> None:
    headers = {**LEGACY_HEADERS, "accept": accept}
    async with http_client(build_http_app(server, json_response=json_response)) as client:
        response = await client.post("/mcp", json=initialize_body(), headers=headers)
    assert response.status_code == 406
    assert response.json()["error"] == {"code": -32600, "message": message}


async def test_json_response_mode_refuses_questions_with_no_back_channel() -> None:
    async with http_client(build_http_app(server, json_response=True)) as client:
        first = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
        assert first.headers["content-type"] == "application/json"
        headers = {**LEGACY_HEADERS, "mcp-session-id": first.headers["mcp-session-id"]}
        await client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        response = await client.post("/mcp", json=call(2, "greet"), headers=headers)
    assert response.json()["error"] == snapshot(
        {
            "code": -32600,
            "message": "Cannot send 'elicitation/create' to the client: this endpoint answers with plain "
            "JSON (json_response=True), so nothing can carry a request to the client; serve SSE answers "
            "or use protocol 2026-07-28",
        }
    )


async def test_a_stateless_endpoint_serves_without_sessions() -> None:
    async with http_client(build_http_app(server, stateless=True)) as client:
        response = await client.post("/mcp", json=call(2, "echo", {"text": "x"}), headers=LEGACY_HEADERS)
        get = await client.get("/mcp", headers=LEGACY_HEADERS)
    assert "mcp-session-id" not in response.headers
    assert sse_messages(response.text)[0]["result"]["content"][0]["text"] == "x"
    assert (get.status_code, get.headers["allow"]) == (405, "POST")


async def test_a_question_mid_call_is_answered_by_a_posted_response(session: Session) -> None:
    async with streaming(session.app, "POST", session.headers, call(5, "greet")) as exchange:
        question = await exchange.next_message()
        assert question["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        accepted = await session.client.post("/mcp", json=answer, headers=session.headers)
        assert accepted.status_code == 202
        with anyio.fail_after(5):
            final = await exchange.next_message()
    assert final == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "Hi, Ada!"}], "isError": False},
    }


async def test_a_dropped_stream_is_resumed_with_last_event_id(session: Session) -> None:
    async with streaming(session.app, "POST", session.headers, call(6, "greet")) as exchange:
        last_id = ""
        question: dict[str, Any] = {}
        async for event in exchange.events():
            last_id = event["id"]
            if event.get("data"):
                question = json.loads(event["data"])
                break
    answer = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"name": "Bo"}},
    }
    assert (await session.client.post("/mcp", json=answer, headers=session.headers)).status_code == 202
    resumed = await session.client.get("/mcp", headers={**session.headers, "last-event-id": last_id})
    assert resumed.headers["content-type"] == "text/event-stream"
    assert sse_messages(resumed.text)[0]["result"]["content"][0]["text"] == "Hi, Bo!"


async def test_a_second_standalone_stream_is_refused_with_409(session: Session) -> None:
    async with streaming(session.app, "GET", session.headers) as first:
        with anyio.fail_after(5):
            await first.started.wait()
        second = await session.client.get("/mcp", headers=session.headers)
    assert first.status == 200
    assert second.status_code == 409
    assert second.json()["error"]["message"] == "Conflict: Only one SSE stream is allowed per session"


async def test_cancelling_a_request_ends_its_stream_without_an_answer(session: Session) -> None:
    async with streaming(session.app, "POST", session.headers, call(8, "sleep")) as exchange:
        with anyio.fail_after(5):
            await exchange.started.wait()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
        assert (await session.client.post("/mcp", json=cancel, headers=session.headers)).status_code == 202
        with anyio.fail_after(5):
            messages = [event async for event in exchange.events() if event.get("data")]
    assert messages == []


async def test_a_stream_the_server_closes_mid_call_is_resumed_by_the_client(session: Session) -> None:
    async with streaming(session.app, "POST", session.headers, call(9, "reconnect")) as exchange:
        with anyio.fail_after(5):
            events = [event async for event in exchange.events()]
    assert [event["data"] for event in events] == [""]  # only the priming event
    resume_headers = {**session.headers, "last-event-id": events[-1]["id"]}
    resumed = await session.client.get("/mcp", headers=resume_headers)
    assert sse_messages(resumed.text)[0]["result"]["content"][0]["text"] == "resumed"


async def test_resuming_the_standalone_stream_replaces_the_reader_still_thought_open(
    session: Session,
) -> None:
    async with streaming(session.app, "GET", session.headers) as first:
        with anyio.fail_after(5):
            priming = await anext(aiter(first.events()))
        resume_headers = {**session.headers, "last-event-id": priming["id"]}
        async with streaming(session.app, "GET", resume_headers) as second:
            with anyio.fail_after(5):
                await second.started.wait()
                await first.finished.wait()
    assert second.status == 200


async def test_at_the_session_cap_the_least_recently_active_session_without_a_client_makes_room() -> None:
    async with http_client(build_http_app(server, max_sessions=2)) as client:
        oldest = await open_session(client)
        newer = await open_session(client)
        newest = await open_session(client)
        ended = await client.post("/mcp", json=call(2, "echo", {"text": "x"}), headers=oldest)
        kept = await client.post("/mcp", json=call(2, "echo", {"text": "x"}), headers=newer)
    assert newest["mcp-session-id"] not in (oldest["mcp-session-id"], newer["mcp-session-id"])
    assert ended.status_code == 404
    assert kept.status_code == 200


async def test_at_the_session_cap_sessions_with_a_client_connected_stay_and_the_newcomer_gets_503() -> None:
    app = build_http_app(server, max_sessions=1)
    async with http_client(app) as client:
        headers = await open_session(client)
        async with streaming(app, "GET", headers) as listening:
            with anyio.fail_after(5):
                await listening.started.wait()
            refused = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
    assert refused.status_code == 503
    assert refused.json()["error"] == snapshot(
        {"code": -32603, "message": "Too many open sessions, each with a client connected; try again later"}
    )
