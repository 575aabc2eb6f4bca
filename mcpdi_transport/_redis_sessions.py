"""Handshake-era sessions in Redis: the session registry, the bus between processes, the SSE event store.

Needs the `redis` package (`pip install mcpdi[redis]`). `build_http_app(sessions=RedisSessions(url))`
(or `mcpdi run --shared-sessions --redis URL`) turns it on; without it each process keeps its
own sessions in memory.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import anyio

from mcpdi_transport._http._store import Reservation
from mcpdi_transport._redis import StoreUnavailable, redis_client
from mcpdi_transport._redis_events import RedisEvents, ms

__all__ = ("RedisSessions",)

logger = logging.getLogger("mcpdi_transport")

UNREACHABLE: Final = "The shared session store (Redis) is unreachable; send the same request again shortly"

_T = TypeVar("_T")
DEFAULT_PROCESS_LEASE: Final = 5.0
"""Seconds a process counts as alive after its last heartbeat (it beats five times a lease)."""
_BROADCAST_WINDOW: Final = 15.0
"""Seconds after its last heartbeat a process still gets the messages sent to every process."""
_INBOX_TTL: Final = 120.0
"""Seconds the messages for a process that stopped reading stay in Redis."""


def _text(name: object) -> str:
    return bytes(name).decode() if isinstance(name, bytes | bytearray) else str(name)


def _flat(fields: Mapping[str, str]) -> list[str]:
    return [item for pair in fields.items() for item in pair]


_RESERVATIONS: Final[tuple[Reservation, ...]] = ("reserved", "full", "peer full")

_NOW: Final = """
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

_RESCORE: Final = (
    _NOW
    + """
local function rescore(ttl, id)
    local expiry = now + tonumber(ttl)
    redis.call('zadd', KEYS[2], expiry, id)
    local peer = redis.call('hget', KEYS[1], 'peer')
    if peer then
        redis.call('zadd', KEYS[3] .. peer, expiry, id)
        redis.call('pexpire', KEYS[3] .. peer, ttl)
    end
end
"""
)


class _Scripts:
    """The Lua scripts that keep a record, the live set and the per-peer sets in step, atomically."""

    __slots__ = ("delete", "load", "reserve", "write")

    def __init__(self, client: Any) -> None:
        # KEYS: the live set, the peer's set. ARGV: id, ttl ms, max sessions, max per peer.
        self.reserve = client.register_script(
            _NOW
            + """
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if redis.call('zcard', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('zadd', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[2])
return 0
"""
        )
        # KEYS: the record, the live set, the peer sets' prefix. ARGV: ttl ms, id, 1 (the record
        # must be new) or 0 (it must exist), field, value, ...
        self.write = client.register_script(
            _RESCORE
            + """
if redis.call('exists', KEYS[1]) == tonumber(ARGV[3]) then return 0 end
redis.call('hset', KEYS[1], unpack(ARGV, 4))
redis.call('pexpire', KEYS[1], ARGV[1])
rescore(ARGV[1], ARGV[2])
return 1
"""
        )
        self.load = client.register_script(
            _RESCORE
            + """
local fields = redis.call('hgetall', KEYS[1])
if #fields == 0 then return fields end
redis.call('pexpire', KEYS[1], ARGV[1])
rescore(ARGV[1], ARGV[2])
return fields
"""
        )
        # KEYS: the record, the live set, the peer sets' prefix, the session's byte counts, its
        # streams. ARGV: id, the events' key prefix.
        self.delete = client.register_script(
            """
local ok, peer = pcall(redis.call, 'hget', KEYS[1], 'peer')
local removed = redis.call('del', KEYS[1])
redis.call('zrem', KEYS[2], ARGV[1])
if ok and peer then redis.call('zrem', KEYS[3] .. peer, ARGV[1]) end
local listed, streams = pcall(redis.call, 'lrange', KEYS[5], 0, -1)
if listed then
    for _, entry in ipairs(streams) do
        redis.call('del', ARGV[2] .. string.sub(entry, string.find(entry, ' ', 1, true) + 1))
    end
end
redis.call('del', KEYS[4], KEYS[5])
return removed
"""
        )


class Reach:
    """Runs Redis commands: a lost connection becomes `StoreUnavailable`, logged once per outage."""

    __slots__ = ("_down",)

    def __init__(self) -> None:
        self._down = False

    async def __call__(self, command: Awaitable[_T]) -> _T:
        import redis.exceptions

        try:
            result = await command
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as error:
            if not self._down:
                logger.error("the Redis session store is unreachable: %s", error)
            self._down = True
            raise StoreUnavailable(UNREACHABLE) from error
        if self._down:
            logger.warning("the Redis session store answers again")
            self._down = False
        return result


class RedisSessions:
    """Handshake-era sessions shared by every process using one Redis (a `SessionStore`).

    A session is one hash holding what `initialize` negotiated, a field per value
    (`<prefix>record:<id>`, a namespace of its own, so an id naming another key is no
    session), expiring after `session_idle_timeout` without activity (every request pushes
    it out); a save writes only the fields it changed, so two processes changing one session
    at once both keep theirs. DELETE removes it, so every process answers 404 afterwards.
    The live sessions are also a sorted set by expiry (and one per peer), so `max_sessions`
    and `max_sessions_per_peer` count every process's; Lua scripts keep them in step.
    Processes pass each other the client's answers and cancellations through an inbox (a
    Redis list) per process, so a message sent is kept until its process takes it, and each
    resumable SSE stream is a Redis stream of at most `max_stream_events` events; the events
    of all streams of one session count against its `max_buffered_bytes` together, whichever
    process writes them (see `RedisEvents`), and go with the session. When Redis
    is unreachable, the requests that need it get `-32603` "The shared session store (Redis) is unreachable;
    send the same request again shortly"; they succeed again once Redis is back.

    A process holds a lease of `process_lease` seconds while it listens, renewed five times
    a lease. Once a process is gone (killed, or cut off from Redis) for that long, an answer
    to its question is refused at once (`503`), and a client resuming the stream of a call
    it ran gets `-32603` for that call instead of waiting: calls are never run again.
    """

    __slots__ = (
        "_client",
        "_events",
        "_listening",
        "_reach",
        "_scripts",
        "_timeout",
        "lease",
        "prefix",
        "processes",
    )

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpdi:session:",
        timeout: float = 2.0,
        max_stream_events: int = 10_000,
        process_lease: float = DEFAULT_PROCESS_LEASE,
        client: Any = None,
    ) -> None:
        if not 0 < process_lease < math.inf:
            msg = f"process_lease must be a positive number of seconds, not {process_lease!r}"
            raise ValueError(msg)
        self._client: Any = client if client is not None else redis_client(url, timeout, retry_closed=True)
        self._reach = Reach()
        self._scripts = _Scripts(self._client)
        self.prefix = prefix
        self.processes = prefix + "processes"
        self.lease = process_lease
        self._timeout = timeout
        self._listening: set[str] = set()
        self._events = RedisEvents(
            self._client,
            self._reach,
            prefix,
            max_stream_events,
            alive=self._alive,
            wait_cap=self._blocking_wait(),
        )

    @property
    def events(self) -> RedisEvents:
        return self._events

    def _record(self, session_id: str) -> str:
        return f"{self.prefix}record:{session_id}"

    def _keys(self, session_id: str) -> list[str]:
        return [self._record(session_id), self.prefix + "live", self.prefix + "peer:"]

    async def reserve(
        self, session_id: str, *, peer: str, ttl: float, max_sessions: int, max_per_peer: int
    ) -> Reservation:
        """Count a new session against the caps of every process (`SessionStore.reserve`).

        The live sessions are a sorted set by expiry (one per peer too): those that expired
        are dropped first, so an expired session frees its slot.
        """
        keys = [self.prefix + "live", f"{self.prefix}peer:{peer}"]
        args = [session_id, ms(ttl), max_sessions, max_per_peer]
        verdict = int(await self._reach(self._scripts.reserve(keys=keys, args=args)))
        return _RESERVATIONS[verdict]

    async def create(self, session_id: str, record: Mapping[str, str], *, ttl: float) -> bool:
        args = [ms(ttl), session_id, 1, *_flat(record)]
        return bool(await self._reach(self._scripts.write(keys=self._keys(session_id), args=args)))

    async def load(self, session_id: str, *, ttl: float) -> dict[str, str] | None:
        import redis.exceptions

        command = self._scripts.load(keys=self._keys(session_id), args=[ms(ttl), session_id])
        try:
            flat: list[bytes] = await self._reach(command)
        except redis.exceptions.ResponseError as error:  # a key of another type: no session
            logger.warning("the Redis key of session %r is no session record: %s", session_id, error)
            return None
        if not flat:
            return None
        return {bytes(flat[n]).decode(): bytes(flat[n + 1]).decode() for n in range(0, len(flat), 2)}

    async def save(self, session_id: str, changes: Mapping[str, str], *, ttl: float) -> bool:
        """Write the `changes` fields (the others stay as any process wrote them) of a live session."""
        args = [ms(ttl), session_id, 0, *_flat(changes)]
        return bool(await self._reach(self._scripts.write(keys=self._keys(session_id), args=args)))

    async def touch(self, session_ids: Sequence[str], *, ttl: float | None) -> list[bool]:
        if not session_ids:
            return []
        if ttl is not None:
            return [await self.load(session_id, ttl=ttl) is not None for session_id in session_ids]
        pipe = self._client.pipeline(transaction=False)
        for session_id in session_ids:
            pipe.exists(self._record(session_id))
        return [bool(result) for result in await self._reach(pipe.execute())]

    async def delete(self, session_id: str) -> bool:
        """Remove the record, the session's slots, its stored events and their byte counts."""
        keys = [*self._keys(session_id), *self._events.budget_keys(session_id)]
        command = self._scripts.delete(keys=keys, args=[session_id, self.prefix + "events:"])
        return bool(await self._reach(command))

    def _inbox(self, process: str) -> str:
        return f"{self.prefix}inbox:{process}"

    def _alive(self, process: str) -> str:
        return f"{self.prefix}alive:{process}"

    def _blocking_wait(self) -> float:
        """How long one blocking command may wait: well within the socket timeout and the lease."""
        return max(0.05, min(1.0, self._timeout / 4, self.lease / 5))

    async def publish(self, message: Mapping[str, Any]) -> bool:
        """Push `message` into the inbox of each live process (all but its sender), or of the
        one it names `to`; False when that one holds no lease. Once this returns, the message
        waits in Redis until its process takes it, whatever happens to that process's
        connection meanwhile."""
        to = message.get("to")
        if to is None:
            window = max(_BROADCAST_WINDOW, self.lease)
            listed = await self._reach(
                self._client.zrangebyscore(self.processes, time.time() - window, "+inf")
            )
            targets = [name for name in map(_text, listed) if name != message.get("from")]
        else:
            if not await self._reach(self._client.exists(self._alive(str(to)))):
                return False
            targets = [str(to)]
        if targets:
            data = json.dumps(message, separators=(",", ":"))
            pipe = self._client.pipeline(transaction=False)
            for process in targets:
                pipe.rpush(self._inbox(process), data)
                pipe.pexpire(self._inbox(process), ms(_INBOX_TTL))
            await self._reach(pipe.execute())
        return True

    async def listen(self, process: str) -> AsyncIterator[dict[str, Any]]:
        """The messages for `process`, each removed from Redis once the consumer took it (at
        least once: after an outage, one taken but perhaps not handled comes again). The
        process counts as alive while it listens."""
        inbox, taken = self._inbox(process), self._inbox(process) + ":taken"
        # A blocking read ends well before the socket timeout, even on a busy machine; a reply
        # lost to a timeout all the same is read again from the taken list.
        wait = self._blocking_wait()
        beat_due = 0.0
        recover = True
        self._listening.add(process)
        try:
            while True:
                try:
                    if time.monotonic() >= beat_due:
                        await self._beat(process)
                        beat_due = time.monotonic() + self.lease / 5
                    if recover:
                        pending: list[bytes] = await self._reach(self._client.lrange(taken, 0, -1))
                        recover = False
                    else:
                        moved = await self._reach(self._client.blmove(inbox, taken, wait, "LEFT", "RIGHT"))
                        pending = [] if moved is None else [moved]
                    for raw in pending:
                        message = json.loads(raw)
                        if isinstance(message, dict):
                            yield cast("dict[str, Any]", message)
                        await self._reach(self._client.lrem(taken, 1, raw))
                except StoreUnavailable:
                    recover = True
                    await anyio.sleep(0.5)  # the outage is logged; read again
        finally:
            self._listening.discard(process)
            with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                await self._client.zrem(self.processes, process)

    async def _beat(self, process: str) -> None:
        now = time.time()
        pipe = self._client.pipeline(transaction=False)
        pipe.set(self._alive(process), b"1", px=ms(self.lease))  # expires by Redis's clock, not ours
        pipe.zadd(self.processes, {process: now})
        pipe.zremrangebyscore(self.processes, "-inf", now - 10 * max(_BROADCAST_WINDOW, self.lease))
        await self._reach(pipe.execute())

    async def end_lease(self, process: str) -> None:
        """`process` stops: it is gone for every other process at once (its last writes are done)."""
        pipe = self._client.pipeline(transaction=False)
        pipe.delete(self._alive(process))
        pipe.zrem(self.processes, process)
        await self._reach(pipe.execute())

    async def aclose(self) -> None:
        """Close the connection pool (the server's lifespan end, or a test's)."""
        await self._client.aclose()
