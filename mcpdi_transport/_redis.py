"""Shared state in Redis for servers that run as several processes: the requestState replay store.

Needs the `redis` package (`pip install mcpdi[redis]`). The in-memory stores stay the default;
one process alone needs none of this.
"""

from __future__ import annotations

import logging
import math
from typing import Any

__all__ = ("RedisReplayStore", "StoreUnavailable")

logger = logging.getLogger("mcpdi_transport")


class StoreUnavailable(ConnectionError):
    """The shared store did not answer; the request that needed it is refused, nothing else stops."""


def redis_client(url: str, timeout: float, *, retry_closed: bool = False) -> Any:
    """A client with short timeouts: a store that went away must fail the request, not hang it.

    With `retry_closed`, a command whose pooled connection the server had closed (Redis
    restarted) is sent once more on a new one; only for commands that may run twice.
    """
    try:
        import redis.asyncio
        import redis.asyncio.retry
        import redis.backoff
        import redis.exceptions
    except ImportError as error:
        msg = "a Redis store needs the redis package: pip install 'mcpdi[redis]'"
        raise ImportError(msg) from error
    redis_class: Any = redis.asyncio.Redis
    retrying: dict[str, Any] = {}
    if retry_closed:
        retrying = {
            "retry": redis.asyncio.retry.Retry(
                redis.backoff.NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)
            ),
            "retry_on_error": [redis.exceptions.ConnectionError],
        }
    return redis_class.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout, **retrying)


class RedisReplayStore:
    """The ids of accepted `requestState` tokens, shared by every process using one Redis.

    `claim` is one `SET key 1 NX PXAT expires_at_ms`: atomic across processes, and Redis drops
    the id when the token would have expired anyway. When Redis is unreachable the claim raises
    `StoreUnavailable`, which refuses that round (fail closed) and logs once per outage; the
    next round after Redis is back is served as usual.
    """

    __slots__ = ("_client", "_down", "prefix")

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpdi:state:",
        timeout: float = 2.0,
        client: Any = None,
    ) -> None:
        self._client: Any = client if client is not None else redis_client(url, timeout)
        self.prefix = prefix
        self._down = False

    async def claim(self, state_id: str, expires_at: float) -> bool:
        import redis.exceptions

        expires_ms = math.ceil(expires_at * 1000)
        try:
            claimed = await self._client.set(self.prefix + state_id, b"1", nx=True, pxat=expires_ms)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as error:
            if not self._down:
                logger.error("the Redis replay store is unreachable: %s", error)
            self._down = True
            msg = "the shared requestState replay store (Redis) is unreachable; try again shortly"
            raise StoreUnavailable(msg) from error
        if self._down:
            logger.warning("the Redis replay store answers again")
            self._down = False
        return bool(claimed)

    async def aclose(self) -> None:
        """Close the connection pool (the server's lifespan end, or a test's)."""
        await self._client.aclose()
