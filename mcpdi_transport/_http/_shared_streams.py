"""SSE streams of shared sessions: written here and copied to the event store, or read back from it."""

from __future__ import annotations

import json
import logging
import re
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

import anyio

from mcpdi.lowlevel import INTERNAL_ERROR
from mcpdi_transport._http._common import error_body
from mcpdi_transport._http._sse import PING, PING_INTERVAL, ByteBudget, EventStream, message_frame
from mcpdi_transport._http._store import EventStore, Trimmed
from mcpdi_transport._redis import StoreUnavailable

__all__ = ("EVENT_ID", "WRITER_GONE", "Mirror", "MirroredStream", "StoredStream")

logger = logging.getLogger("mcpdi_transport")

EVENT_ID: Final = re.compile(r"([0-9a-f]{16})-([0-9]{1,18})")
"""The id of an event of a shared stream: the stream's random id, then the event's number."""

_MAX_PENDING: Final = 100_000
_RETRY_INTERVAL: Final = 0.5
_READ_WAIT: Final = 1.0

_Write = tuple[str, str, int, bytes]
"""(operation, stream key, number, frame): `begin` it (the frame: the id of the request it
answers), `add` an event, `trim` below a number, `end` it, `forget` its events (read to the end)."""

WRITER_GONE: Final = "The process running this call is gone; the call ended without an answer"


class Mirror:
    """Copies what this process's shared streams write to the event store, in order, in one task.

    While the store is unreachable the writes wait (and are retried); clients reading from
    this process get every event meanwhile, only resuming on another process waits.

    The store counts each session's events against `max_bytes`, all processes' together;
    past it the session's oldest events go, whoever wrote them. The writer of a stream drops
    them from its memory too: this process at once for its own streams, another process
    when `tell` (the bus) reaches it.
    """

    def __init__(
        self,
        events: EventStore,
        ttl: float,
        *,
        writer: str,
        max_bytes: int,
        tell: Callable[[Trimmed], Awaitable[None]],
    ) -> None:
        self.events = events
        self.ttl = ttl
        self.writer = writer
        """The process whose streams these are (its lease tells readers elsewhere it still writes)."""
        self.max_bytes = max_bytes
        self._tell = tell
        self.streams: weakref.WeakValueDictionary[str, MirroredStream] = weakref.WeakValueDictionary()
        """This process's streams by key, while they live."""
        self._pending: deque[_Write] = deque()
        self._arrived = anyio.Event()
        self._down = False

    async def begin(self, key: str, answering: str) -> None:
        """Store at once who writes the stream `key` and which request it answers (its id as JSON).

        Not queued like the events: the stream's first event must not leave before the store
        knows the stream, or a client resuming it elsewhere after this process died would find
        nothing to resume, and its call would get no answer at all. When the store cannot
        take it now, it is queued (and retried) and the stream goes on.
        """
        try:
            await self.events.begin(key, writer=self.writer, answering=answering, ttl=self.ttl)
        except StoreUnavailable as error:
            logger.error("cannot record the writer of an SSE stream in the shared store, retrying: %s", error)
            self.put(("begin", key, 0, answering.encode()))

    def put(self, write: _Write) -> None:
        if len(self._pending) >= _MAX_PENDING:
            self._pending.popleft()
            logger.warning(
                "the shared event store is behind by %d writes: the oldest is dropped", _MAX_PENDING
            )
        self._pending.append(write)
        self._arrived.set()

    async def run(self) -> None:
        """Write until cancelled (the app's lifespan ends)."""
        while True:
            if not self._pending:
                self._arrived = anyio.Event()
                await self._arrived.wait()
            batch = list(self._pending)
            try:
                await self._write(batch)
            except StoreUnavailable as error:
                if not self._down:
                    logger.error("cannot copy SSE events to the shared store, retrying: %s", error)
                self._down = True
                await anyio.sleep(_RETRY_INTERVAL)
                continue
            if self._down:
                logger.warning("SSE events reach the shared store again")
                self._down = False
            for _ in batch:
                self._pending.popleft()

    async def flush(self) -> None:
        """Write what is pending once, outside `run` (the app is stopping)."""
        try:
            await self._write(list(self._pending))
        except StoreUnavailable as error:
            logger.error("%d SSE events were not copied to the shared store: %s", len(self._pending), error)
        self._pending.clear()

    async def _write(self, batch: list[_Write]) -> None:
        added: list[tuple[int, bytes]] = []
        key = ""
        for operation, stream_key, number, frame in batch:
            if added and (operation != "add" or stream_key != key):
                await self._append(key, added)
                added = []
            key = stream_key
            if operation == "add":
                added.append((number, frame))
            elif operation == "begin":
                await self.events.begin(
                    stream_key, writer=self.writer, answering=frame.decode(), ttl=self.ttl
                )
            elif operation == "trim":
                await self.events.trim(stream_key, number)
            elif operation == "forget":
                await self.events.forget(stream_key, writer=self.writer)
            else:
                await self.events.end(stream_key, ttl=self.ttl)
        if added:
            await self._append(key, added)

    async def _append(self, key: str, added: list[tuple[int, bytes]]) -> None:
        trimmed = await self.events.append(
            key, added, ttl=self.ttl, writer=self.writer, max_bytes=self.max_bytes
        )
        for trim in trimmed:
            await self.drop(trim)

    async def drop(self, trim: Trimmed) -> None:
        """Drop the events the session's budget trimmed from memory: here, or where they were written."""
        if trim.writer != self.writer:
            await self._tell(trim)
            return
        stream = self.streams.get(trim.key)
        if stream is not None:
            stream.drop_before(trim.first_kept)


class MirroredStream(EventStream):
    """A resumable stream of a shared session: served from memory here, copied to the event store.

    The stream of a request's answer names the request (`answering`, its id as JSON), so that a
    reader elsewhere can end that request with an error should this process die before the end.
    """

    __slots__ = ("__weakref__", "_answering", "_key", "_mirror")

    def __init__(
        self, stream_id: str, key: str, *, budget: ByteBudget, mirror: Mirror, answering: str | None = None
    ) -> None:
        super().__init__(stream_id, resumable=True, budget=budget)
        self._key = key
        self._mirror = mirror
        mirror.streams[key] = self
        self._answering = answering
        """The request this stream answers, until the store has been told (then None)."""

    async def follow(
        self, start: int = 0, *, first_reader: bool = False, ping_interval: float = PING_INTERVAL
    ) -> AsyncIterator[bytes]:
        """The events as `EventStream.follow` yields them, once the store knows who writes the stream."""
        answering, self._answering = self._answering, None
        if answering is not None:
            await self._mirror.begin(self._key, answering)
        async for frame in super().follow(start, first_reader=first_reader, ping_interval=ping_interval):
            yield frame

    def _add(self, frame: bytes) -> None:
        number = self._dropped + len(self._frames)
        super()._add(frame)
        self._mirror.put(("add", self._key, number, frame))

    def drop_oldest(self, *, keep: int = 0) -> bool:
        if not super().drop_oldest(keep=keep):
            return False
        self._mirror.put(("trim", self._key, self._dropped, b""))
        return True

    def drop_before(self, first_kept: int) -> None:
        """Forget the events below `first_kept`, which the store dropped already."""
        while self._dropped < first_kept and super().drop_oldest():
            pass

    def close(self) -> None:
        if not self.closed:
            self._mirror.put(("end", self._key, 0, b""))
        super().close()

    def forget(self) -> None:
        """The stream was read to its end (or is one too many kept): the store forgets its events."""
        self._mirror.put(("forget", self._key, 0, b""))


class StoredStream(EventStream):
    """A stream another process writes, read back from the event store for a client that resumed here."""

    __slots__ = ("_events", "_key")

    def __init__(self, stream_id: str, key: str, events: EventStore) -> None:
        super().__init__(stream_id, resumable=True)
        self._key = key
        self._events = events

    def position_after(self, event_id: str) -> int | None:
        match = EVENT_ID.fullmatch(event_id)
        if match is None or match[1] != self.stream_id:
            return None
        return int(match[2]) + 1

    async def follow(
        self, start: int = 0, *, first_reader: bool = False, ping_interval: float = PING_INTERVAL
    ) -> AsyncIterator[bytes]:
        """The events from number `start` on as the writer adds them, until it ends the stream.

        Also ends when the session ends here, and when the store goes away (the client
        resumes again later). Should the writer's process be gone before the end, the
        request the stream answers gets `-32603` (`WRITER_GONE`) here: it is not run again.
        """
        generation = self._generation
        after = start - 1
        quiet_since = anyio.current_time()
        while not self._closed and generation == self._generation:
            try:
                events, ended = await self._events.read(self._key, after, wait=_READ_WAIT)
            except StoreUnavailable as error:
                logger.error("a resumed SSE stream ends: %s", error)
                return
            for number, frame in events:
                yield frame
                after = number
            if ended:
                self._drained = True
                return
            if not events:
                try:
                    orphaned = await self._events.orphaned(self._key)
                except StoreUnavailable as error:
                    logger.error("a resumed SSE stream ends: %s", error)
                    return
                if orphaned is not None:
                    logger.warning(
                        "the process writing SSE stream %s is gone: its call fails", self.stream_id
                    )
                    yield message_frame(error_body(INTERNAL_ERROR, WRITER_GONE, json.loads(orphaned)))
                    self._drained = True
                    return
            now = anyio.current_time()
            if events:
                quiet_since = now
            elif now - quiet_since >= ping_interval:
                yield PING
                quiet_since = now
