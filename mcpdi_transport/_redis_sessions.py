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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import anyio

from mcpdi_transport._http._store import Reservation
from mcpdi_transport._redis import StoreUnavailable, redis_client

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
_END_ID: Final = "2-0"
"""Events are stored as `1-<number>`; the writer's end marker sorts after all of them."""


def _text(name: object) -> str:
    return bytes(name).decode() if isinstance(name, bytes | bytearray) else str(name)


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


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
        # KEYS: the record, the live set, the peer sets' prefix. ARGV: id.
        self.delete = client.register_script(
            """
local ok, peer = pcall(redis.call, 'hget', KEYS[1], 'peer')
local removed = redis.call('del', KEYS[1])
redis.call('zrem', KEYS[2], ARGV[1])
if ok and peer then redis.call('zrem', KEYS[3] .. peer, ARGV[1]) end
return removed
"""
        )


class _Reach:
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


def _log_failed_writes(results: Sequence[object]) -> None:
    """A retried write finds its events already stored (Redis refuses an id twice): that is no error."""
    for result in results:
        if isinstance(result, Exception) and "equal or smaller" not in str(result):
            logger.warning("the Redis event store refused a write: %s", result)


class _RedisEvents:
    """Each resumable SSE stream is a Redis stream, its entries `1-<event number>`, expiring when idle."""

    __slots__ = ("_alive", "_client", "_reach", "_wait_cap", "max_events", "prefix", "writers_prefix")

    def __init__(
        self,
        client: Any,
        reach: _Reach,
        prefix: str,
        max_events: int,
        *,
        writers_prefix: str,
        alive: Callable[[str], str],
        wait_cap: float,
    ) -> None:
        self._client = client
        self._reach = reach
        self.prefix = prefix
        self.max_events = max_events
        self.writers_prefix = writers_prefix
        self._alive = alive
        """The key that exists while a process holds its lease."""
        self._wait_cap = wait_cap
        """A blocking read ends before this, well before the socket timeout."""

    def _writer(self, key: str) -> str:
        """Who writes the stream `key` and the request it answers: a hash of its own, which no
        trimming of the stream's events removes, expiring with the stream."""
        return self.writers_prefix + key

    async def begin(self, key: str, *, writer: str, answering: str, ttl: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.hset(self._writer(key), mapping={b"writer": writer.encode(), b"answering": answering.encode()})
        pipe.pexpire(self._writer(key), _ms(ttl))
        _log_failed_writes(await self._reach(pipe.execute(raise_on_error=False)))

    async def orphaned(self, key: str) -> str | None:
        writer, answering = await self._reach(self._client.hmget(self._writer(key), b"writer", b"answering"))
        if writer is None or answering is None:
            return None  # written by a process that does not say who it is: no lease to check
        pipe = self._client.pipeline(transaction=False)
        pipe.exists(self._alive(bytes(writer).decode()))
        pipe.xrange(self.prefix + key, _END_ID, _END_ID)
        alive, ended = await self._reach(pipe.execute())
        return None if alive or ended else bytes(answering).decode()

    async def append(self, key: str, events: Sequence[tuple[int, bytes]], *, ttl: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        for number, frame in events:
            pipe.xadd(self.prefix + key, {b"f": frame}, id=f"1-{number}", maxlen=self.max_events)
        pipe.pexpire(self.prefix + key, _ms(ttl))
        pipe.pexpire(self._writer(key), _ms(ttl))
        _log_failed_writes(await self._reach(pipe.execute(raise_on_error=False)))

    async def end(self, key: str, *, ttl: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.xadd(self.prefix + key, {b"end": b""}, id=_END_ID, maxlen=self.max_events)
        pipe.pexpire(self.prefix + key, _ms(ttl))
        _log_failed_writes(await self._reach(pipe.execute(raise_on_error=False)))

    async def trim(self, key: str, first_kept: int) -> None:
        await self._reach(self._client.xtrim(self.prefix + key, minid=f"1-{first_kept}", approximate=False))

    async def exists(self, key: str) -> bool:
        return bool(await self._reach(self._client.exists(self.prefix + key, self._writer(key))))

    async def read(self, key: str, after: int, *, wait: float) -> tuple[list[tuple[int, bytes]], bool]:
        start = f"1-{after}" if after >= 0 else "0-0"
        command = self._client.xread(
            {self.prefix + key: start}, count=256, block=_ms(min(wait, self._wait_cap))
        )
        reply: list[tuple[Any, list[tuple[bytes, dict[bytes, bytes]]]]] = await self._reach(command) or []
        events: list[tuple[int, bytes]] = []
        ended = False
        for _, entries in reply:
            for entry_id, fields in entries:
                text = entry_id.decode()
                if text == _END_ID:
                    ended = True
                elif b"f" in fields:
                    events.append((int(text.partition("-")[2]), fields[b"f"]))
        return events, ended


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
    resumable SSE stream is a Redis stream of at most `max_stream_events` events. When Redis
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
        self._reach = _Reach()
        self._scripts = _Scripts(self._client)
        self.prefix = prefix
        self.processes = prefix + "processes"
        self.lease = process_lease
        self._timeout = timeout
        self._listening: set[str] = set()
        self._events = _RedisEvents(
            self._client,
            self._reach,
            prefix + "events:",
            max_stream_events,
            writers_prefix=prefix + "writer:",
            alive=self._alive,
            wait_cap=self._blocking_wait(),
        )

    @property
    def events(self) -> _RedisEvents:
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
        args = [session_id, _ms(ttl), max_sessions, max_per_peer]
        verdict = int(await self._reach(self._scripts.reserve(keys=keys, args=args)))
        return _RESERVATIONS[verdict]

    async def create(self, session_id: str, record: Mapping[str, str], *, ttl: float) -> bool:
        args = [_ms(ttl), session_id, 1, *_flat(record)]
        return bool(await self._reach(self._scripts.write(keys=self._keys(session_id), args=args)))

    async def load(self, session_id: str, *, ttl: float) -> dict[str, str] | None:
        import redis.exceptions

        command = self._scripts.load(keys=self._keys(session_id), args=[_ms(ttl), session_id])
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
        args = [_ms(ttl), session_id, 0, *_flat(changes)]
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
        command = self._scripts.delete(keys=self._keys(session_id), args=[session_id])
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
                pipe.pexpire(self._inbox(process), _ms(_INBOX_TTL))
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
        pipe.set(self._alive(process), b"1", px=_ms(self.lease))  # expires by Redis's clock, not ours
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
