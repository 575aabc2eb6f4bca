"""2025-11-25 sessions shared in Redis by two mcpdi processes behind round-robin nginx (no pinning).

The gateway configuration is `examples/deploy/nginx-mcp-shared.conf`, the one `docs/deploy.md`
shows. Where a test must choose which backend gets which request it talks to them directly.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from handshake_http import Event, answer_of, call, events, headers, initialize, notify, post_stream, request
from mcp import Client as SdkClient
from scale_services import (
    Redis,
    accept_ok,
    call_tool,
    free_port,
    nginx,
    python_server,
    result_text,
    start_redis,
    stop,
)

from mcpdi_transport import Client, RedisSessions

pytestmark = pytest.mark.slow

BACKEND_SCRIPT = Path(__file__).parent / "gateway_backend.py"
CONFIG = Path(__file__).parents[2] / "examples" / "deploy" / "nginx-mcp-shared.conf"
UNREACHABLE = "The shared session store (Redis) is unreachable; send the same request again shortly"


@dataclass
class Deployment:
    gateway: str
    eu: str
    us: str
    redis: Redis
    eu_process: subprocess.Popen[bytes]
    gateway_process: subprocess.Popen[bytes]
    us_process: subprocess.Popen[bytes]


@contextmanager
def shared_deployment(
    workdir: Path,
    redis: Redis,
    client_request_timeout: float = 15,
    process_lease: float = 5,
    events_lag: float = 0,
) -> Iterator[Deployment]:
    keys = ",".join(secrets.token_hex(32) for _ in range(2))
    eu, us, gateway = free_port(), free_port(), free_port()
    config = CONFIG.read_text()
    for marker, port in (("{{LISTEN}}", gateway), ("{{EU}}", eu), ("{{US}}", us)):
        config = config.replace(marker, f"127.0.0.1:{port}")
    env = {"MCPDI_STATE_KEYS": keys, "REDIS_URL": redis.url, "SHARED_SESSIONS": "1", "REDIS_TIMEOUT": "1"}
    env["CLIENT_REQUEST_TIMEOUT"] = str(client_request_timeout)  # a lost answer fails its call soon
    env["PROCESS_LEASE"] = str(process_lease)
    env["EVENTS_LAG"] = str(events_lag)
    with (
        python_server(BACKEND_SCRIPT, eu, {**env, "BACKEND": "eu1"}) as eu_process,
        python_server(BACKEND_SCRIPT, us, {**env, "BACKEND": "us1"}) as us_process,
        nginx(config, workdir, gateway) as gateway_process,
    ):
        yield Deployment(
            f"http://127.0.0.1:{gateway}/mcp",
            f"http://127.0.0.1:{eu}/mcp",
            f"http://127.0.0.1:{us}/mcp",
            redis,
            eu_process,
            gateway_process,
            us_process,
        )


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    redis = start_redis()
    try:
        with shared_deployment(tmp_path_factory.mktemp("nginx"), redis) as deployed:
            yield deployed
    finally:
        stop(redis.process)


def text_of(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]


def test_a_session_initialized_on_one_backend_is_served_by_the_other(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    _, listed = answer_of(deployment.us, session_id, request(1, "tools/list"))
    assert "pay" in {tool["name"] for tool in listed["result"]["tools"]}
    assert text_of(call(deployment.us, session_id, "whoami", {}, 2)) == "us1"
    assert text_of(call(deployment.eu, session_id, "whoami", {}, 3)) == "eu1"


def test_an_unknown_session_is_404_on_every_backend(deployment: Deployment) -> None:
    for url in (deployment.eu, deployment.us):
        response = httpx2.post(url, content=request(1, "tools/list"), headers=headers("f" * 32))
        assert response.status_code == 404
        assert response.json()["error"] == {"code": -32600, "message": "Session not found"}


def test_an_answer_posted_to_the_other_backend_completes_the_waiting_call(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    body = request(5, "tools/call", {"name": "pay", "arguments": {"amount": 3}})
    with post_stream(deployment.eu, session_id, body) as response:
        received = events(response)
        question = next(event.message for event in received if event.message is not None)
        assert question["method"] == "elicitation/create"
        assert isinstance(question["id"], str)  # unique among the processes serving the session
        answer = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"ok": True}},
        }
        assert notify(deployment.us, session_id, answer).status_code == 202
        final = next(event.message for event in received if event.message is not None)
    assert final["id"] == 5
    assert text_of(final) == "paid 3 on eu1"


def test_a_dropped_stream_resumes_with_last_event_id_on_the_other_backend(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    body = request(7, "tools/call", {"name": "steps", "arguments": {"count": 4}})
    with post_stream(deployment.eu, session_id, body) as response:
        received = events(response)
        priming = next(received)
        assert priming.message is None
        assert priming.id is not None
        first = next(received)
        assert first.message is not None
        assert first.message["params"]["data"] == "step 0 on eu1"
        last_seen = first.id
    assert last_seen is not None
    resumed = headers(session_id, **{"last-event-id": last_seen})
    with (
        httpx2.Client(timeout=30) as client,
        client.stream("GET", deployment.us, headers=resumed) as response,
    ):
        assert response.status_code == 200
        replayed = list(events(response))
    messages = [event.message for event in replayed if event.message is not None]
    assert [m["params"]["data"] for m in messages[:-1]] == [f"step {n} on eu1" for n in (1, 2, 3)]
    assert messages[-1]["id"] == 7
    assert text_of(messages[-1]) == "4 steps on eu1"
    numbers = [int(str(event.id).rpartition("-")[2]) for event in replayed]
    assert numbers == sorted(numbers)
    assert numbers[0] > int(last_seen.rpartition("-")[2])


def kill_redis_connections(redis: Redis) -> int:
    """Drop every client connection of `redis` (the processes' waits for messages included)."""
    import redis as redis_client

    with redis_client.Redis.from_url(redis.url) as admin:
        killed: Any = admin.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        killed += admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        return int(killed)


@pytest.mark.parametrize("message", ["answer", "cancellation"])
def test_a_message_posted_while_the_owner_lost_its_redis_connection_still_arrives(
    deployment: Deployment, message: str
) -> None:
    session_id = initialize(deployment.eu)
    started = time.monotonic()
    body = request(21, "tools/call", {"name": "pay", "arguments": {"amount": 4}})
    with post_stream(deployment.eu, session_id, body) as response:
        received = events(response)
        question = next(event.message for event in received if event.message is not None)
        if message == "answer":
            sent = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"ok": True}},
            }
        else:
            sent = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 21}}
        # eu1 cannot reconnect until the message was sent: the window of a process reconnecting.
        deployment.eu_process.send_signal(signal.SIGSTOP)
        try:
            assert kill_redis_connections(deployment.redis) >= 2  # at least one wait per backend
            assert notify(deployment.us, session_id, sent).status_code == 202
        finally:
            deployment.eu_process.send_signal(signal.SIGCONT)
        rest = [event.message for event in received if event.message is not None]
    if message == "answer":
        assert [text_of(final) for final in rest] == ["paid 4 on eu1"]
    else:
        assert rest == []  # the call was cancelled: no answer
    assert time.monotonic() - started < 10  # not the 15 s of a lost answer


def test_an_answer_for_a_process_that_is_gone_is_refused_at_once(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    lost = {"jsonrpc": "2.0", "id": "0123456789abcdef.00000000-1", "result": {"action": "accept"}}
    refused = notify(deployment.us, session_id, lost)
    assert refused.status_code == 503
    assert refused.json()["error"] == {
        "code": -32603,
        "message": "The process that asked this question is gone, and the call with it",
    }


@contextmanager
def waiting_call(url: str, session_id: str, id_: int) -> Iterator[Iterator[Event]]:
    """A call taking 30 s, running on `url`: the events of its stream after the priming one."""
    body = request(id_, "tools/call", {"name": "wait", "arguments": {"seconds": 30}})
    with post_stream(url, session_id, body) as response:
        received = events(response)
        next(received)  # the priming event: the call runs
        yield received


def test_a_cancellation_posted_to_the_other_backend_stops_the_call(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    started = time.monotonic()
    with waiting_call(deployment.eu, session_id, 9) as received:
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
        assert notify(deployment.us, session_id, cancel).status_code == 202
        assert [event.message for event in received if event.message is not None] == []
    assert time.monotonic() - started < 10


def test_delete_on_one_backend_ends_the_session_on_the_other(deployment: Deployment) -> None:
    session_id = initialize(deployment.eu)
    started = time.monotonic()
    with waiting_call(deployment.eu, session_id, 11) as received:
        deleted = httpx2.delete(deployment.us, headers=headers(session_id))
        assert deleted.status_code == 200
        assert [event.message for event in received if event.message is not None] == []
    assert time.monotonic() - started < 10  # the call running on eu1 was stopped
    for url in (deployment.eu, deployment.us):
        response = httpx2.post(url, content=request(12, "tools/list"), headers=headers(session_id))
        assert response.status_code == 404
        assert response.json()["error"]["message"] == "Session not found"


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sdk", "mcpdi"])
async def test_a_session_through_the_round_robin_gateway_is_served_by_both_backends(
    deployment: Deployment, kind: str
) -> None:
    client_class: Any = SdkClient if kind == "sdk" else Client
    with anyio.fail_after(60):
        async with client_class(deployment.gateway, mode="legacy", elicitation_callback=accept_ok) as client:
            served = {result_text(await client.call_tool("whoami", {})) for _ in range(6)}
            assert served == {"eu1", "us1"}  # no pinning: one session, both processes
            for _ in range(4):  # the question's answer lands on either process
                assert result_text(await client.call_tool("pay", {"amount": 2})).startswith("paid 2 on ")


def test_a_redis_that_goes_away_fails_the_session_requests_clearly_and_they_recover(
    tmp_path: Path,
) -> None:
    redis = start_redis()
    try:
        with shared_deployment(tmp_path, redis) as deployed:
            session_id = initialize(deployed.eu)
            assert text_of(call(deployed.us, session_id, "whoami", {}, 1)) == "us1"
            body = request(2, "tools/call", {"name": "steps", "arguments": {"count": 4}})
            with post_stream(deployed.eu, session_id, body) as response:
                received = events(response)
                next(received)  # the call runs
                redis.process.send_signal(signal.SIGSTOP)  # stops answering; keeps its data
                rest = [event.message for event in received if event.message is not None]
            # A call already running needs no Redis: its events and answer still arrive.
            assert [m.get("params", {}).get("data") for m in rest[:-1]] == [
                f"step {n} on eu1" for n in range(4)
            ]
            assert text_of(rest[-1]) == "4 steps on eu1"
            try:
                for url in (deployed.eu, deployed.us):
                    refused = httpx2.post(url, content=request(2, "tools/list"), headers=headers(session_id))
                    assert refused.status_code == 503
                    assert refused.json()["error"] == {"code": -32603, "message": UNREACHABLE}
                params = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                }
                # A new session is counted against the caps of every process in Redis: refused too.
                fresh = httpx2.post(deployed.eu, content=request(0, "initialize", params), headers=headers())
                assert fresh.status_code == 503
                assert fresh.json()["error"] == {"code": -32603, "message": UNREACHABLE}
                # The stateless era needs no Redis for a single round: it is served meanwhile.
                region = {"mcp-param-region": "eu"}
                modern = call_tool(deployed.gateway, "where", {"arguments": {"region": "eu"}}, region)
                assert modern["result"]["content"][0]["text"].startswith("eu served by ")
            finally:
                redis.process.send_signal(signal.SIGCONT)
            assert text_of(call(deployed.eu, session_id, "whoami", {}, 3)) == "eu1"
            assert text_of(call(deployed.us, session_id, "whoami", {}, 4)) == "us1"
            stop(redis.process)  # a Redis that comes back empty: sessions are gone, new ones work
            redis = start_redis(redis.port)
            for url in (deployed.eu, deployed.us):
                response = httpx2.post(url, content=request(5, "tools/list"), headers=headers(session_id))
                assert response.status_code == 404
            assert text_of(call(deployed.us, initialize(deployed.eu), "whoami", {}, 6)) == "us1"
    finally:
        stop(redis.process)


@pytest.mark.anyio
async def test_a_session_id_naming_another_kind_of_key_is_404(deployment: Deployment) -> None:
    import redis.asyncio

    session_id = initialize(deployment.eu)
    assert text_of(call(deployment.eu, session_id, "whoami", {}, 1)) == "eu1"
    store = redis.asyncio.Redis.from_url(deployment.redis.url)
    try:
        streams = [key.decode() async for key in store.scan_iter(f"mcpdi:session:events:{session_id}:*")]
        stream_key = streams[0]
        await store.rpush("mcpdi:session:record:a-list", "x")  # in the records' own namespace
        await store.hset("mcpdi:session:a-hash", "x", "y")
        for name in ("a-list", "a-hash", stream_key.removeprefix("mcpdi:session:"), "bus"):
            for method in ("GET", "DELETE", "POST"):
                content = request(2, "tools/list") if method == "POST" else None
                response = httpx2.request(method, deployment.us, content=content, headers=headers(name))
                assert response.status_code == 404, (name, method, response.text)
                assert response.json()["error"] == {"code": -32600, "message": "Session not found"}
        assert await store.type(stream_key) == b"stream"  # left as it was
    finally:
        await store.aclose()
    assert text_of(call(deployment.us, session_id, "whoami", {}, 3)) == "us1"


@pytest.mark.parametrize("lease", [0, -1, float("inf"), float("nan")])
def test_a_process_lease_that_is_no_positive_number_of_seconds_is_refused(lease: float) -> None:
    with pytest.raises(ValueError, match="process_lease must be a positive number of seconds, not "):
        RedisSessions("redis://127.0.0.1:1/0", process_lease=lease)


async def orphaned_until(events: Any, key: str, expected: str | None) -> None:
    with anyio.fail_after(10):
        while await events.orphaned(key) != expected:
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_a_stream_is_orphaned_while_its_writer_holds_no_lease_however_its_events_were_trimmed(
    deployment: Deployment,
) -> None:
    store = RedisSessions(deployment.redis.url, prefix=f"orphans-{secrets.token_hex(4)}:", process_lease=0.5)
    events, writer = store.events, "a" * 16
    try:
        await events.begin("s:1", writer=writer, answering='"call-7"', ttl=60)
        frames = [(n, b"data: x\r\n\r\n") for n in range(20)]
        await events.append("s:1", frames, ttl=60, writer=writer, max_bytes=1 << 20)
        await events.trim("s:1", 15)  # the session's byte budget dropped the oldest events
        await events.begin("s:2", writer=writer, answering="8", ttl=60)
        await events.end("s:2", ttl=60)
        assert await events.orphaned("s:1") == '"call-7"'  # its writer never held a lease
        async with anyio.create_task_group() as group:

            async def listen() -> None:
                async for _ in store.listen(writer):  # pragma: no cover - nothing is sent to it
                    pass

            group.start_soon(listen)
            await orphaned_until(events, "s:1", None)  # the writer listens: its stream lives
            group.cancel_scope.cancel()
        await orphaned_until(events, "s:1", '"call-7"')  # the lease ran out
        assert await events.orphaned("s:2") is None  # it ended: no call to fail
        assert await events.orphaned("s:3") is None  # nobody said who writes it
    finally:
        await store.aclose()
