"""Faults in the real parts under shared sessions: Redis restarted, nginx reloaded, a backend
SIGKILLed while it owns a call. The client sees a completed call or a clear error, within the
configured timeout, and no call runs twice."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from handshake_http import events, headers, initialize, notify, post_stream, request
from scale_services import result_text, start_redis, stop
from test_shared_sessions import Deployment, shared_deployment

from mcpdi_transport import Client

pytestmark = pytest.mark.slow

QUESTION_TIMEOUT = 5.0


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    redis = start_redis()
    deployed: Deployment | None = None
    try:
        with shared_deployment(tmp_path, redis, QUESTION_TIMEOUT) as deployed:
            yield deployed
    finally:
        stop((redis if deployed is None else deployed.redis).process)  # a test may restart it


def yes(question_id: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": question_id, "result": {"action": "accept", "content": {"ok": True}}}


def test_redis_restarted_empty_mid_call_refuses_the_answer_and_times_the_call_out(
    deployment: Deployment,
) -> None:
    session_id = initialize(deployment.eu)
    started = time.monotonic()
    body = request(3, "tools/call", {"name": "pay", "arguments": {"amount": 4}})
    with post_stream(deployment.eu, session_id, body) as response:
        received = events(response)
        question = next(event.message for event in received if event.message is not None)
        stop(deployment.redis.process)
        deployment.redis = start_redis(deployment.redis.port)  # every session is gone with it
        answered = notify(deployment.us, session_id, yes(question["id"]))
        rest = [event.message for event in received if event.message is not None]
    assert answered.status_code == 404
    assert answered.json()["error"] == {"code": -32600, "message": "Session not found"}
    assert rest[-1] == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32001, "message": "The client did not answer 'elicitation/create' within 5 s"},
    }
    assert time.monotonic() - started < QUESTION_TIMEOUT + 5


@pytest.mark.anyio
async def test_nginx_reloaded_mid_call_the_call_completes(deployment: Deployment) -> None:
    async def reload_then_yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        deployment.gateway_process.send_signal(signal.SIGHUP)  # nginx -s reload
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(30):
        async with Client(deployment.gateway, mode="legacy", elicitation_callback=reload_then_yes) as client:
            paid = [result_text(await client.call_tool("pay", {"amount": n})) for n in (1, 2, 3)]
    assert [text.rpartition(" on ")[0] for text in paid] == ["paid 1", "paid 2", "paid 3"]
    assert deployment.gateway_process.poll() is None


def test_a_backend_killed_while_it_owns_a_call_breaks_the_stream_and_nothing_runs_twice(
    deployment: Deployment,
) -> None:
    session_id = initialize(deployment.eu)
    started = time.monotonic()
    body = request(3, "tools/call", {"name": "pay", "arguments": {"amount": 4}})
    last_id = None
    with post_stream(deployment.eu, session_id, body) as response:
        received = events(response)
        question: dict[str, Any] = {}
        for event in received:
            last_id = event.id or last_id
            if event.message is not None:
                question = event.message
                break
        deployment.eu_process.send_signal(signal.SIGKILL)
        with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
            list(received)
    assert last_id is not None
    # eu1 counts as alive a few seconds more: its inbox takes the answer, which nobody reads.
    assert notify(deployment.us, session_id, yes(question["id"])).status_code == 202
    resumed = headers(session_id, **{"last-event-id": last_id})
    with httpx2.Client(timeout=10) as client, client.stream("GET", deployment.us, headers=resumed) as stream:
        assert stream.status_code == 200
        replayed = [event.message for event in events(stream) if event.message is not None]
    assert replayed == []  # a clean end: no answer, and the call was not run again on us1
    assert time.monotonic() - started < 10
