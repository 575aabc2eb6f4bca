"""What a shared session carries between two apps on one Redis: negotiated state, credential, expiry, budget.

Each app has its own `RedisSessions`, as two processes would; requests go to the apps in process.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
import redis.asyncio
from scale_services import Redis, redis_server
from starlette.applications import Starlette

from mcpdi import AccessToken, AuthSettings, Context, MCPServer
from mcpdi_transport import RedisSessions, Trimmed, build_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

VERSION = "2025-11-25"


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    server: Redis
    with redis_server() as server:
        yield server.url


def bookshop(forever_started: anyio.Event | None = None) -> MCPServer:
    mcp = MCPServer("Bookshop")

    @mcp.tool()
    async def shout(times: int, ctx: Context) -> str:
        """Log a line `times` times, a kilobyte each."""
        for n in range(times):
            await ctx.info(f"{n:04d} " + "x" * 1000)
        return "done"

    @mcp.tool()
    def client(ctx: Context) -> str:
        """Who initialized the session, and whether it tells of changed roots."""
        info, capabilities = ctx.client_info, ctx.client_capabilities
        assert info is not None
        assert capabilities is not None
        assert capabilities.roots is not None
        return f"{info.name} {info.version}, roots listChanged={capabilities.roots.list_changed}"

    @mcp.tool()
    async def forever() -> str:
        """Never answer."""
        if forever_started is not None:
            forever_started.set()
        await anyio.sleep_forever()
        return "never"

    return mcp


class Tokens:
    """Bearer tokens named after their client."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id=token, scopes=[]) if token.startswith("client-") else None


def sse_messages(response: httpx2.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]


def client_of(app: Starlette) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://127.0.0.1:8000")


@asynccontextmanager
async def two_apps(redis_url: str, **options: Any) -> AsyncIterator[tuple[httpx2.AsyncClient, ...]]:
    """Two apps serving one server, sharing sessions through Redis: a client for each."""
    apps: list[Starlette] = [
        build_http_app(bookshop(), sessions=RedisSessions(redis_url), **options) for _ in range(2)
    ]
    async with apps[0].router.lifespan_context(apps[0]), apps[1].router.lifespan_context(apps[1]):
        clients = [client_of(app) for app in apps]
        async with clients[0], clients[1]:
            yield tuple(clients)


def headers(session_id: str | None = None, token: str | None = None) -> dict[str, str]:
    sent = {"accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION}
    if session_id is not None:
        sent["mcp-session-id"] = session_id
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return sent


async def post(
    client: httpx2.AsyncClient, session_id: str | None, message: dict[str, Any], token: str | None = None
) -> httpx2.Response:
    return await client.post("/mcp", json=message, headers=headers(session_id, token))


async def initialize(client: httpx2.AsyncClient, token: str | None = None) -> str:
    capabilities = {"roots": {"listChanged": True}}
    params = {
        "protocolVersion": VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "0"},
    }
    response = await post(
        client, None, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, token
    )
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = await post(client, session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token)
    assert done.status_code == 202
    return session_id


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def call(id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


async def test_what_initialize_negotiated_on_one_app_is_known_to_the_other(redis_url: str) -> None:
    async with two_apps(redis_url) as (first, second):
        session_id = await initialize(first)
        answer = sse_messages(await post(second, session_id, call(1, "client", {})))[-1]
        assert answer["result"]["content"][0]["text"] == "t 0, roots listChanged=True"


async def test_a_log_level_set_through_one_app_holds_for_calls_on_the_other(redis_url: str) -> None:
    async with two_apps(redis_url) as (first, second):
        session_id = await initialize(first)
        logged = sse_messages(await post(second, session_id, call(1, "shout", {"times": 2})))
        assert [m.get("method") for m in logged] == ["notifications/message"] * 2 + [None]
        level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}
        assert sse_messages(await post(first, session_id, level))[-1]["result"] == {}
        quiet = sse_messages(await post(second, session_id, call(3, "shout", {"times": 2})))
        assert [m.get("id") for m in quiet] == [3]


async def test_a_session_belongs_to_the_credential_that_created_it_on_every_app(redis_url: str) -> None:
    auth = {"token_verifier": Tokens(), "auth": AuthSettings(issuer_url="https://auth.example.com")}
    async with two_apps(redis_url, **auth) as (first, second):
        session_id = await initialize(first, "client-a")
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for client in (first, second):
            stolen = await post(client, session_id, listing, "client-b")
            assert stolen.status_code == 404
            assert stolen.json()["error"] == {"code": -32600, "message": "Session not found"}
            own = await post(client, session_id, listing, "client-a")
            assert sse_messages(own)[-1]["result"]["tools"][0]["name"] == "shout"


async def test_a_session_lives_on_when_the_app_that_created_it_stops(redis_url: str) -> None:
    first, second = (build_http_app(bookshop(), sessions=RedisSessions(redis_url)) for _ in range(2))
    async with first.router.lifespan_context(first), client_of(first) as client:
        session_id = await initialize(client)
    async with second.router.lifespan_context(second), client_of(second) as client:
        answer = await post(client, session_id, call(1, "shout", {"times": 1}))
        assert sse_messages(answer)[-1]["result"]["content"][0]["text"] == "done"


async def test_an_app_that_stops_ends_its_streams_in_the_store_too(redis_url: str) -> None:
    started = anyio.Event()
    app = build_http_app(bookshop(started), sessions=RedisSessions(redis_url))
    answers: list[tuple[str, httpx2.Response]] = []
    async with client_of(app) as client, anyio.create_task_group() as group:

        async def call_forever(session_id: str) -> None:
            answers.append((session_id, await post(client, session_id, call(1, "forever", {}))))

        async with app.router.lifespan_context(app):
            group.start_soon(call_forever, await initialize(client))
            with anyio.fail_after(10):
                await started.wait()
        # The app stopped with the call running; the call's stream ends.
    ((session_id, answer),) = answers
    stream_id = answer.text.partition("id: ")[2].partition("-")[0]
    store: Any = redis.asyncio.Redis.from_url(redis_url)
    try:
        assert await store.xrange(f"mcpdi:session:events:{session_id}:{stream_id}", "2-0", "2-0")
    finally:
        await store.aclose()


async def test_an_idle_shared_session_expires_on_every_app(redis_url: str) -> None:
    async with two_apps(redis_url, session_idle_timeout=1.0) as (first, second):
        session_id = await initialize(first)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        last_activity = anyio.current_time()
        for _ in range(3):  # activity on either app keeps it alive
            await anyio.sleep(0.5)
            last_activity = anyio.current_time()
            assert (await post(second, session_id, listing)).status_code == 200
        # Without activity the record expires; watched in Redis, since a request would be activity.
        store: Any = redis.asyncio.Redis.from_url(redis_url)
        try:
            with anyio.fail_after(10):
                while await store.exists(f"mcpdi:session:record:{session_id}"):
                    await anyio.sleep(0.05)
        finally:
            await store.aclose()
        assert anyio.current_time() - last_activity >= 1.0
        for client in (first, second):
            assert (await post(client, session_id, listing)).status_code == 404


async def test_plain_json_answers_share_sessions_too(redis_url: str) -> None:
    async with two_apps(redis_url, json_response=True) as (first, second):
        session_id = await initialize(first)
        answer = await post(second, session_id, call(1, "shout", {"times": 1}))
        assert answer.json()["result"]["content"][0]["text"] == "done"


async def test_the_byte_budget_bounds_what_the_store_keeps_and_a_resumed_stream_skips_ahead(
    redis_url: str,
) -> None:
    async with two_apps(redis_url, max_buffered_bytes=4096) as (first, second):
        session_id = await initialize(first)
        answer = await post(first, session_id, call(1, "shout", {"times": 20}))
        ids = [line[4:] for line in answer.text.splitlines() if line.startswith("id: ")]
        stream_id = ids[0].rpartition("-")[0]
        key = f"mcpdi:session:events:{session_id}:{stream_id}"
        store: Any = redis.asyncio.Redis.from_url(redis_url)
        try:
            with anyio.fail_after(5):  # the copy to Redis runs behind the answer
                while not await store.xrange(key, "2-0", "2-0"):
                    await anyio.sleep(0.05)
            kept: list[tuple[bytes, dict[bytes, bytes]]] = await store.xrange(key)
        finally:
            await store.aclose()
        sizes = [len(fields[b"f"]) for entry_id, fields in kept if entry_id != b"2-0"]
        assert 0 < sum(sizes) <= 4096
        first_kept = int(kept[0][0].decode().partition("-")[2])
        assert first_kept > 10  # the oldest events were dropped, as in memory
        # The client lost the stream after event 1, which the budget has dropped since.
        resumed = await second.get(
            "/mcp", headers={**headers(session_id), "last-event-id": f"{stream_id}-1"}, timeout=10
        )
        replayed = [line[4:] for line in resumed.text.splitlines() if line.startswith("id: ")]
        assert int(replayed[0].rpartition("-")[2]) == first_kept
        assert sse_messages(resumed)[-1]["result"]["content"][0]["text"] == "done"


def test_shared_sessions_and_a_stateless_endpoint_exclude_each_other(redis_url: str) -> None:
    with pytest.raises(
        ValueError, match="sessions= keeps handshake-era sessions, which stateless=True turns off"
    ):
        build_http_app(bookshop(), stateless=True, sessions=RedisSessions(redis_url))


async def test_the_redis_event_store_reads_after_a_number_takes_a_write_twice_and_trims(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisSessions(redis_url, prefix="mcpdi:test-events:")
    events = store.events
    try:
        assert not await events.exists("s:1")
        budget = {"ttl": 60, "writer": "a" * 16, "max_bytes": 1 << 20}
        await events.append("s:1", [(0, b"zero"), (1, b"one"), (2, b"two")], **budget)
        with caplog.at_level(logging.WARNING, "mcpdi_transport"):
            await events.append("s:1", [(2, b"two"), (3, b"three")], **budget)  # a retried batch
        assert caplog.records == []
        assert await events.read("s:1", 1, wait=0.01) == ([(2, b"two"), (3, b"three")], False)
        await events.trim("s:1", 2)
        assert await events.read("s:1", 0, wait=0.01) == ([(2, b"two"), (3, b"three")], False)
        await events.end("s:1", ttl=60)
        assert await events.read("s:1", 3, wait=0.01) == ([], True)
        assert await events.exists("s:1")
        await events.begin("s:2", writer="a" * 16, answering="7", ttl=60)
        assert await events.exists("s:2")  # begun: its writer may have died before its first event
    finally:
        await store.aclose()


async def test_the_redis_event_store_counts_a_sessions_streams_together_and_drops_the_oldest_first(
    redis_url: str,
) -> None:
    store = RedisSessions(redis_url, prefix=f"mcpdi:test-{secrets.token_hex(4)}:")
    events, budget = store.events, {"ttl": 60, "max_bytes": 10}
    first, second = "a" * 16, "b" * 16
    try:
        assert await events.append("s:1", [(0, b"1234"), (1, b"5678")], writer=first, **budget) == []
        assert await events.append("s:1", [(1, b"5678")], writer=first, **budget) == []  # counted once
        # Another process's stream of the session overflows it: the session's oldest go first.
        trimmed = await events.append("s:2", [(0, b"abcdef")], writer=second, **budget)
        assert trimmed == [Trimmed(first, "s:1", 1)]
        assert await events.read("s:1", -1, wait=0.01) == ([(1, b"5678")], False)
        # Past the budget on its own, a stream keeps its newest event for the reader waiting.
        trimmed = await events.append("s:2", [(1, b"0123456789ab")], writer=second, **budget)
        assert trimmed == [Trimmed(first, "s:1", 2), Trimmed(second, "s:2", 1)]
        assert await events.read("s:2", -1, wait=0.01) == ([(1, b"0123456789ab")], False)
        await events.trim("s:2", 2)  # dropped by the writer's own budget: uncounted too
        await events.end("s:1", ttl=60)
        await events.forget("s:1", writer=first)
        raw: Any = redis.asyncio.Redis.from_url(redis_url)
        try:
            assert await raw.hgetall(store.prefix + "bytes:s") == {b"total": b"0", b"s:2": b"0"}
            assert await raw.lrange(store.prefix + "streams:s", 0, -1) == [f"{second} s:2".encode()]
            await store.delete("s")  # the session ends: its events and their count go with it
            assert await raw.exists(store.prefix + "bytes:s", store.prefix + "streams:s") == 0
            assert await raw.exists(store.prefix + "events:s:2") == 0
        finally:
            await raw.aclose()
    finally:
        await store.aclose()


async def test_the_redis_registry_creates_once_saves_only_live_sessions_and_deletes(redis_url: str) -> None:
    store = RedisSessions(redis_url, prefix="mcpdi:test-registry:")
    try:
        assert await store.create("a", {"n": "1", "peer": "p"}, ttl=60)
        assert not await store.create("a", {"n": "2"}, ttl=60)
        assert await store.load("a", ttl=60) == {"n": "1", "peer": "p"}
        assert await store.save("a", {"m": "3"}, ttl=60)
        assert await store.load("a", ttl=60) == {"n": "1", "peer": "p", "m": "3"}
        assert await store.touch(["a", "b"], ttl=None) == [True, False]
        assert await store.touch(["a", "b"], ttl=60) == [True, False]
        assert await store.delete("a")
        assert not await store.delete("a")
        assert not await store.save("a", {"n": "4"}, ttl=60)  # an ended session is not brought back
        assert await store.load("a", ttl=60) is None
    finally:
        await store.aclose()


async def test_reservations_count_across_stores_and_an_ended_or_expired_session_frees_its_slot(
    redis_url: str,
) -> None:
    prefix = f"mcpdi:test-caps-{secrets.token_hex(4)}:"
    first, second = RedisSessions(redis_url, prefix=prefix), RedisSessions(redis_url, prefix=prefix)
    caps = {"max_sessions": 2, "max_per_peer": 5}
    try:
        assert await first.reserve("a", peer="p", ttl=60, **caps) == "reserved"
        assert await first.create("a", {"peer": "p"}, ttl=60)
        assert await second.reserve("b", peer="q", ttl=0.3, **caps) == "reserved"  # never created
        assert await second.reserve("c", peer="q", ttl=60, **caps) == "full"
        assert await first.reserve("c", peer="q", ttl=60, **caps) == "full"
        with anyio.fail_after(10):  # "b" expires: its slot is free again
            while await second.reserve("c", peer="q", ttl=60, **caps) == "full":
                await anyio.sleep(0.05)
        assert await first.reserve("d", peer="r", ttl=60, **caps) == "full"
        assert await second.delete("a")  # ended on the other store: its slot is free
        assert await first.reserve("d", peer="r", ttl=60, **caps) == "reserved"
        one_per_peer = {"max_sessions": 10, "max_per_peer": 1}
        assert await first.reserve("e", peer="s", ttl=60, **one_per_peer) == "reserved"
        assert await second.reserve("f", peer="s", ttl=60, **one_per_peer) == "peer full"
    finally:
        await first.aclose()
        await second.aclose()


@asynccontextmanager
async def two_apps_apart(
    redis_url: str,
    stores: tuple[RedisSessions, RedisSessions],
    started: tuple[anyio.Event | None, anyio.Event | None] = (None, None),
    **options: Any,
) -> AsyncIterator[tuple[httpx2.AsyncClient, ...]]:
    """Two apps, each with its own store on one Redis key space of their own: a client for each."""
    apps = [
        build_http_app(bookshop(event), sessions=store, **options)
        for store, event in zip(stores, started, strict=True)
    ]
    async with apps[0].router.lifespan_context(apps[0]), apps[1].router.lifespan_context(apps[1]):
        clients = [client_of(app) for app in apps]
        async with clients[0], clients[1]:
            yield tuple(clients)


def stores(redis_url: str) -> tuple[RedisSessions, RedisSessions]:
    prefix = f"mcpdi:test-{secrets.token_hex(4)}:"
    return RedisSessions(redis_url, prefix=prefix), RedisSessions(redis_url, prefix=prefix)


async def test_max_sessions_per_peer_holds_across_apps(redis_url: str) -> None:
    async with two_apps_apart(redis_url, stores(redis_url), max_sessions_per_peer=2) as (first, second):
        await initialize(first)
        await initialize(second)
        for client in (first, second):
            refused = await post(client, None, INITIALIZE)
            assert refused.status_code == 429
            assert refused.json()["error"] == {
                "code": -32600,
                "message": "Too many open sessions for this client (max_sessions_per_peer=2); "
                "end one with DELETE or try again later",
            }


async def test_max_sessions_holds_across_apps_while_every_session_has_a_client_waiting(
    redis_url: str,
) -> None:
    started = (anyio.Event(), anyio.Event())
    async with (
        two_apps_apart(redis_url, stores(redis_url), started, max_sessions=2) as (first, second),
        anyio.create_task_group() as group,
    ):
        for client in (first, second):
            group.start_soon(post, client, await initialize(client), call(1, "forever", {}))
        with anyio.fail_after(10):
            for event in started:
                await event.wait()
        for client in (first, second):
            refused = await post(client, None, INITIALIZE)
            assert refused.status_code == 503
            assert refused.json()["error"] == {
                "code": -32603,
                "message": "Too many open sessions (max_sessions=2, counted across every process "
                "sharing them), none of them idle here; try again later",
            }
        group.cancel_scope.cancel()


async def test_a_session_idle_on_this_app_makes_room_at_the_shared_cap(redis_url: str) -> None:
    async with two_apps_apart(redis_url, stores(redis_url), max_sessions=2) as (first, second):
        idle = await initialize(first)
        await initialize(second)
        newcomer = await post(first, None, INITIALIZE)
        assert newcomer.status_code == 200
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert (await post(second, idle, listing)).status_code == 404  # ended for the newcomer


class HeldSaves(RedisSessions):
    """A store whose saves wait until `release` is set (another app saves meanwhile)."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix=prefix)
        self.release = anyio.Event()
        self.holding = anyio.Event()

    async def save(self, session_id: str, changes: Mapping[str, str], *, ttl: float) -> bool:
        self.holding.set()
        await self.release.wait()
        return await super().save(session_id, changes, ttl=ttl)


async def test_two_apps_saving_one_session_at_once_both_keep_what_they_changed(redis_url: str) -> None:
    prefix = f"mcpdi:test-{secrets.token_hex(4)}:"
    held = HeldSaves(redis_url, prefix)
    async with two_apps_apart(redis_url, (RedisSessions(redis_url, prefix=prefix), held)) as (first, second):
        session_id = await initialize(first)
        level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}
        again = {**INITIALIZE, "id": 3}
        again["params"] = {**INITIALIZE["params"], "clientInfo": {"name": "renamed", "version": "1"}}
        async with anyio.create_task_group() as group:
            # The second app reads the record, sets the log level, and saves late...
            group.start_soon(post, second, session_id, level)
            with anyio.fail_after(10):
                await held.holding.wait()
            # ... after the first app stored what the client's new initialize said.
            assert sse_messages(await post(first, session_id, again))[-1]["result"]["serverInfo"]
            held.release.set()
        reader = RedisSessions(redis_url, prefix=prefix)
        try:
            record = await reader.load(session_id, ttl=60)
        finally:
            await reader.aclose()
        assert record is not None
        assert (json.loads(record["clientInfo"]), record["logLevel"]) == (
            {"name": "renamed", "version": "1"},
            '"error"',
        )
        quiet = sse_messages(await post(first, session_id, call(4, "shout", {"times": 2})))
        assert [m.get("id") for m in quiet] == [4]  # the level set on the other app holds here
