"""The Redis replay store: one claim per state id across processes, expiry, and an outage that heals."""

from __future__ import annotations

import logging
import time

import anyio
import pytest
import redis.asyncio
from scale_services import redis_server, start_redis, stop

from mcpdi_transport import RedisReplayStore, StoreUnavailable

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_of_ten_parallel_claims_from_two_processes_exactly_one_wins() -> None:
    with redis_server() as server:
        stores = [RedisReplayStore(server.url), RedisReplayStore(server.url)]
        expires_at = time.time() + 60
        results: list[bool] = []

        async def claim(store: RedisReplayStore) -> None:
            results.append(await store.claim("state-1", expires_at))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for number in range(10):
                    group.start_soon(claim, stores[number % 2])
        assert sorted(results) == [False] * 9 + [True]
        assert await stores[0].claim("state-2", expires_at) is True
        for store in stores:
            await store.aclose()


async def test_a_claimed_id_expires_when_its_token_would() -> None:
    with redis_server() as server:
        store = RedisReplayStore(server.url, prefix="t:")
        expires_at = time.time() + 30
        assert await store.claim("abc", expires_at) is True
        client = redis.asyncio.Redis.from_url(server.url)
        remaining_ms = await client.pttl("t:abc")
        assert 25_000 < remaining_ms <= 30_000
        await client.aclose()
        await store.aclose()


async def test_an_unreachable_redis_refuses_the_claim_clearly_and_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = start_redis()
    store = RedisReplayStore(server.url, timeout=1.0)
    try:
        assert await store.claim("before", time.time() + 60) is True
        stop(server.process)
        with caplog.at_level(logging.ERROR, "mcpdi_transport"), pytest.raises(StoreUnavailable) as caught:
            await store.claim("during", time.time() + 60)
        assert str(caught.value) == (
            "the shared requestState replay store (Redis) is unreachable; try again shortly"
        )
        assert "the Redis replay store is unreachable" in caplog.text
        server = start_redis(server.port)
        with anyio.fail_after(10):
            assert await store.claim("after", time.time() + 60) is True
    finally:
        await store.aclose()
        stop(server.process)
