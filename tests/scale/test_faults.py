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
from mcp import Client as SdkClient
from mcp import MCPError as SdkError
from scale_services import result_text, start_redis, stop
from test_shared_sessions import Deployment, shared_deployment

from mcpdi_transport import Client
from mcpdi_transport._http._shared import GONE

pytestmark = pytest.mark.slow

QUESTION_TIMEOUT = 5.0
PROCESS_LEASE = 2.0
"""How long a killed backend still counts as alive to the other."""
RECONNECT_DELAY = 1.0
"""The `retry` the backends announce (`sse_retry_ms`): a client resumes a broken stream after it."""
DEAD_OWNER_BOUND = PROCESS_LEASE + RECONNECT_DELAY + 2.0
"""From SIGKILL to the client's error: the lease runs out, the client resumes, one read of the store."""
WRITER_GONE = "The process running this call is gone; the call ended without an answer"
EVENTS_LAG = 0.5
"""Seconds late each write of a backend's SSE events reaches Redis in the `late` runs: a killed
backend has sent its client events that never reached the store."""
ANSWER_LEASE = 5.0
"""The lease where a test posts an answer to a killed backend's question within it: a post
takes well under a second even on a loaded machine, but at times more than the 1.6 s that
the short lease leaves after the last heartbeat."""


def copied(lease: float) -> pytest.MarkDecorator:
    """Run the test with the backends' events copied to Redis at once, and late."""
    params = [(0.0, lease), (EVENTS_LAG, lease)]
    return pytest.mark.parametrize("deployment", params, ids=["copied", "late"], indirect=True)


@pytest.fixture
def deployment(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Deployment]:
    lag, lease = getattr(request, "param", (0.0, PROCESS_LEASE))
    redis = start_redis()
    deployed: Deployment | None = None
    try:
        with shared_deployment(tmp_path, redis, QUESTION_TIMEOUT, lease, lag) as deployed:
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


@copied(ANSWER_LEASE)
def test_a_backend_killed_while_it_owns_a_call_breaks_the_stream_and_the_resumed_one_fails_the_call(
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
    killed = time.monotonic()
    assert last_id is not None
    # eu1 still holds its lease: its inbox takes the answer, which nobody reads.
    assert notify(deployment.us, session_id, yes(question["id"])).status_code == 202
    resumed = headers(session_id, **{"last-event-id": last_id})
    with httpx2.Client(timeout=10) as client, client.stream("GET", deployment.us, headers=resumed) as stream:
        assert stream.status_code == 200
        replayed = [event.message for event in events(stream) if event.message is not None]
    failed = time.monotonic()
    # The call ends with an error, and it was not run again on us1.
    assert replayed == [{"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": WRITER_GONE}}]
    assert failed - killed < ANSWER_LEASE + 2
    # Once the lease is over, an answer to eu1's question is refused at once.
    refused = notify(deployment.us, session_id, yes(question["id"]))
    assert (refused.status_code, refused.json()["error"]["message"]) == (503, GONE)
    assert time.monotonic() - started < ANSWER_LEASE + 5


@copied(PROCESS_LEASE)
@pytest.mark.anyio
async def test_the_official_client_gets_an_error_soon_after_the_backend_running_its_call_is_killed(
    deployment: Deployment,
) -> None:
    """Through the round-robin gateway, a backend is SIGKILLed while its call waits on the person."""
    backends = {"eu1": deployment.eu_process, "us1": deployment.us_process}
    killed: list[tuple[str, float]] = []

    async def kill_the_asker(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        owner = params.message.removesuffix("?").rpartition(" on ")[2]
        backends[owner].send_signal(signal.SIGKILL)
        backends[owner].wait()
        killed.append((owner, time.monotonic()))
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(QUESTION_TIMEOUT + 20):
        async with SdkClient(
            deployment.gateway, mode="legacy", elicitation_callback=kill_the_asker
        ) as client:
            with pytest.raises(SdkError) as failed:
                await client.call_tool("pay_here", {"amount": 4})
            took = time.monotonic() - killed[0][1]
            (survivor,) = set(backends) - {killed[0][0]}
            # The session lives on in Redis: the surviving backend serves its next call.
            assert result_text(await client.call_tool("whoami", {})) == survivor
    assert took < DEAD_OWNER_BOUND < QUESTION_TIMEOUT + RECONNECT_DELAY
    # The resumed stream says the writer is gone (the client never gives up on its own).
    assert (failed.value.error.code, failed.value.error.message) == (-32603, WRITER_GONE)
