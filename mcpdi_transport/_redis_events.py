"""The SSE event store of `RedisSessions`: a Redis stream per resumable stream, one byte budget per session.

Each stream's events are entries `1-<event number>`, its end the entry `2-0`. A session's
streams count against one budget in Redis, whichever process writes them: a hash of the bytes
each stream holds (and their `total`) and a list of its streams, oldest first, each named
with the process writing it. Lua scripts store, trim and count in one step, so two processes
writing one session at once cannot both fit under the budget.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcpdi_transport._http._store import Trimmed

if TYPE_CHECKING:
    from mcpdi_transport._redis_sessions import Reach

__all__ = ("RedisEvents", "ms")

logger = logging.getLogger("mcpdi_transport")

_END_ID: Final = "2-0"
"""Events are stored as `1-<number>`; the writer's end marker sorts after all of them."""

_LAST_EVENT: Final = "1-18446744073709551615"


def ms(seconds: float) -> int:
    """Seconds as the whole milliseconds Redis takes, at least one."""
    return max(1, math.ceil(seconds * 1000))


def _log_failed_writes(results: Sequence[object]) -> None:
    """A retried write finds its events already stored (Redis refuses an id twice): that is no error."""
    for result in results:
        if isinstance(result, Exception) and "equal or smaller" not in str(result):
            logger.warning("the Redis event store refused a write: %s", result)


_COUNTING: Final = f"""
local sizes = KEYS[2]
local total = tonumber(redis.call('hget', sizes, 'total') or '0')
local function charge(field, size)
    if size ~= 0 then
        redis.call('hincrby', sizes, field, size)
        total = total + size
    end
end
local function ended(key)
    return #redis.call('xrange', key, '{_END_ID}', '{_END_ID}') > 0
end
local function count(key)
    local n = redis.call('xlen', key)
    if n > 0 and ended(key) then n = n - 1 end
    return n
end
-- Drop the oldest event of `key` (its bytes counted under `field`): its number, or nil for none.
local function drop_first(key, field)
    local first = redis.call('xrange', key, '1-0', '{_LAST_EVENT}', 'count', 1)
    if #first == 0 then return nil end
    redis.call('xdel', key, first[1][1])
    charge(field, -#first[1][2][2])
    return tonumber(string.sub(first[1][1], 3))
end
"""

# KEYS: the stream, the session's sizes, its streams in order, the stream's writer hash.
# ARGV: ttl ms, max bytes, max events, the stream's key, its writer, the events' key prefix,
# then number, frame, number, frame, ...
_APPEND: Final = (
    _COUNTING
    + """
local stream, order, field, writer, prefix = KEYS[1], KEYS[3], ARGV[4], ARGV[5], ARGV[6]
local limit, max_events = tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('hexists', sizes, field) == 0 then
    redis.call('hset', sizes, field, 0)
    redis.call('rpush', order, writer .. ' ' .. field)
end
for i = 7, #ARGV, 2 do
    local added = redis.pcall('xadd', stream, '1-' .. ARGV[i], 'f', ARGV[i + 1])
    if type(added) ~= 'table' then charge(field, #ARGV[i + 1]) end  -- else: stored already
end
while redis.call('xlen', stream) > max_events and drop_first(stream, field) do end
local trimmed = {}
if total > limit then
    for _, entry in ipairs(redis.call('lrange', order, 0, -1)) do
        local space = string.find(entry, ' ', 1, true)
        local other = string.sub(entry, space + 1)
        local key = prefix .. other
        local gone = redis.call('exists', key) == 0
        if gone then charge(other, -tonumber(redis.call('hget', sizes, other) or '0')) end
        local keep = (other == field) and 1 or 0
        local first = nil
        while total > limit and count(key) > keep do first = drop_first(key, other) end
        if first then
            table.insert(trimmed, string.sub(entry, 1, space - 1))
            table.insert(trimmed, other)
            table.insert(trimmed, first + 1)
        end
        if other ~= field and (gone or (count(key) == 0 and ended(key))) then
            charge(other, -tonumber(redis.call('hget', sizes, other) or '0'))
            redis.call('hdel', sizes, other)
            redis.call('lrem', order, 1, entry)
        end
        if total <= limit then break end
    end
end
redis.call('hset', sizes, 'total', total)
for _, key in ipairs(KEYS) do redis.call('pexpire', key, ARGV[1]) end
return trimmed
"""
)

# KEYS: the stream, the session's sizes. ARGV: the stream's key, the first number kept.
_TRIM: Final = (
    _COUNTING
    + """
local first_kept = tonumber(ARGV[2])
if redis.call('hexists', sizes, ARGV[1]) == 0 then
    redis.call('xtrim', KEYS[1], 'minid', '1-' .. first_kept)
    return 0
end
local freed = 0
for _, entry in ipairs(redis.call('xrange', KEYS[1], '1-0', '1-' .. (first_kept - 1))) do
    redis.call('xdel', KEYS[1], entry[1])
    freed = freed + #entry[2][2]
end
charge(ARGV[1], -freed)
redis.call('hset', sizes, 'total', total)
return freed
"""
)

# KEYS: the stream, the session's sizes, its streams in order. ARGV: the stream's key, its writer.
_FORGET: Final = (
    _COUNTING
    + """
redis.call('xtrim', KEYS[1], 'minid', '2-0')
local size = tonumber(redis.call('hget', sizes, ARGV[1]) or '0')
if redis.call('hdel', sizes, ARGV[1]) == 1 then redis.call('hset', sizes, 'total', total - size) end
redis.call('lrem', KEYS[3], 1, ARGV[2] .. ' ' .. ARGV[1])
"""
)


class RedisEvents:
    """Each resumable SSE stream is a Redis stream, expiring when idle; a session's streams share
    one byte budget (`EventStore`)."""

    __slots__ = (
        "_alive",
        "_append",
        "_client",
        "_forget",
        "_reach",
        "_trim",
        "_wait_cap",
        "max_events",
        "prefix",
    )

    def __init__(
        self,
        client: Any,
        reach: Reach,
        prefix: str,
        max_events: int,
        *,
        alive: Callable[[str], str],
        wait_cap: float,
    ) -> None:
        self._client = client
        self._reach = reach
        self.prefix = prefix
        """The sessions' prefix: events under `events:`, writers under `writer:`, budgets under
        `bytes:` and `streams:` (each followed by the session id)."""
        self.max_events = max_events
        self._alive = alive
        """The key that exists while a process holds its lease."""
        self._wait_cap = wait_cap
        """A blocking read ends before this, well before the socket timeout."""
        self._append = client.register_script(_APPEND)
        self._trim = client.register_script(_TRIM)
        self._forget = client.register_script(_FORGET)

    def _events(self, key: str) -> str:
        return f"{self.prefix}events:{key}"

    def _writer(self, key: str) -> str:
        """Who writes the stream `key` and the request it answers: a hash of its own, which no
        trimming of the stream's events removes, expiring with the stream."""
        return f"{self.prefix}writer:{key}"

    def budget_keys(self, session_id: str) -> list[str]:
        """The session's byte counts (a hash) and its streams oldest first (a list)."""
        return [f"{self.prefix}bytes:{session_id}", f"{self.prefix}streams:{session_id}"]

    def _session_keys(self, key: str) -> list[str]:
        return self.budget_keys(key.rpartition(":")[0])

    async def begin(self, key: str, *, writer: str, answering: str, ttl: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.hset(self._writer(key), mapping={b"writer": writer.encode(), b"answering": answering.encode()})
        pipe.pexpire(self._writer(key), ms(ttl))
        _log_failed_writes(await self._reach(pipe.execute(raise_on_error=False)))

    async def orphaned(self, key: str) -> str | None:
        writer, answering = await self._reach(self._client.hmget(self._writer(key), b"writer", b"answering"))
        if writer is None or answering is None:
            return None  # written by a process that does not say who it is: no lease to check
        pipe = self._client.pipeline(transaction=False)
        pipe.exists(self._alive(bytes(writer).decode()))
        pipe.xrange(self._events(key), _END_ID, _END_ID)
        alive, ended = await self._reach(pipe.execute())
        return None if alive or ended else bytes(answering).decode()

    async def append(
        self, key: str, events: Sequence[tuple[int, bytes]], *, ttl: float, writer: str, max_bytes: int
    ) -> list[Trimmed]:
        keys = [self._events(key), *self._session_keys(key), self._writer(key)]
        args: list[object] = [ms(ttl), max_bytes, self.max_events, key, writer, f"{self.prefix}events:"]
        for number, frame in events:
            args += [number, frame]
        flat: list[Any] = await self._reach(self._append(keys=keys, args=args))
        return [
            Trimmed(bytes(flat[n]).decode(), bytes(flat[n + 1]).decode(), int(flat[n + 2]))
            for n in range(0, len(flat), 3)
        ]

    async def end(self, key: str, *, ttl: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.xadd(self._events(key), {b"end": b""}, id=_END_ID)
        for stored in (self._events(key), *self._session_keys(key)):
            pipe.pexpire(stored, ms(ttl))
        _log_failed_writes(await self._reach(pipe.execute(raise_on_error=False)))

    async def trim(self, key: str, first_kept: int) -> None:
        if first_kept > 0:
            keys = [self._events(key), self._session_keys(key)[0]]
            await self._reach(self._trim(keys=keys, args=[key, first_kept]))

    async def forget(self, key: str, *, writer: str) -> None:
        keys = [self._events(key), *self._session_keys(key)]
        await self._reach(self._forget(keys=keys, args=[key, writer]))

    async def exists(self, key: str) -> bool:
        return bool(await self._reach(self._client.exists(self._events(key), self._writer(key))))

    async def read(self, key: str, after: int, *, wait: float) -> tuple[list[tuple[int, bytes]], bool]:
        start = f"1-{after}" if after >= 0 else "0-0"
        command = self._client.xread(
            {self._events(key): start}, count=256, block=ms(min(wait, self._wait_cap))
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
