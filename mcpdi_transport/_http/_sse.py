"""Server-sent events: the frame format, and a replayable log of one stream's events."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

import anyio

from mcpdi.lowlevel import encode_message
from mcpdi_transport._outbound import DEFAULT_MAX_PENDING_CLIENT_REQUESTS, Waiting

__all__ = ("PING", "SSE_HEADERS", "ByteBudget", "EventStream", "TotalBudget", "message_frame", "sse_frame")

SSE_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
)

PING: Final = b": ping\r\n\r\n"
"""A comment line: keeps proxies from closing an idle stream; clients ignore it."""

PING_INTERVAL: Final = 15.0

logger = logging.getLogger("mcpdi_transport")


def sse_frame(
    data: str, *, event: str | None = "message", event_id: str | None = None, retry_ms: int | None = None
) -> bytes:
    """One SSE event."""
    lines: list[str] = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if retry_ms is not None:
        lines.append(f"retry: {retry_ms}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.extend(f"data: {part}" for part in data.split("\n"))
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def message_frame(message: Mapping[str, Any], *, event_id: str | None = None) -> bytes:
    """One `message` event carrying a JSON-RPC message (JSON text holds no raw newline)."""
    head = (
        f"id: {event_id}\r\nevent: message\r\ndata: " if event_id is not None else "event: message\r\ndata: "
    )
    return head.encode() + encode_message(message) + b"\r\n\r\n"


class TotalBudget:
    """The bytes of buffered events all sessions of a process may hold together, and the
    server-to-client requests they may have waiting for an answer (`waiting`).

    Past `limit`, the session holding the most loses its oldest events first, so many
    sessions that never read cannot fill the server's memory between them.
    """

    __slots__ = ("budgets", "limit", "overflowing", "used", "waiting")

    def __init__(
        self, limit: int, max_pending_client_requests: int = DEFAULT_MAX_PENDING_CLIENT_REQUESTS
    ) -> None:
        self.limit = limit
        self.waiting = Waiting(max_pending_client_requests)
        self.used = 0
        self.budgets: set[ByteBudget] = set()
        self.overflowing = False
        """A warning was logged for the current overflow; again only once usage fell to half."""

    def shed(self, writer: EventStream) -> None:
        """Drop the heaviest sessions' oldest events until the total holds (`writer`'s newest stays)."""
        if self.used <= self.limit:
            if self.overflowing and self.used <= self.limit // 2:
                self.overflowing = False
            return
        if not self.overflowing:
            self.overflowing = True
            logger.warning(
                "buffered events of all sessions exceed max_buffered_bytes_total=%d: "
                "dropping the oldest events of the sessions holding the most",
                self.limit,
            )
        for budget in sorted(self.budgets, key=lambda budget: budget.used, reverse=True):
            budget.drop_until(lambda: self.used <= self.limit, writer)
            if self.used <= self.limit:
                return


class ByteBudget:
    """The bytes of buffered events a session may hold; past it, its oldest events go first.

    Every stream of a session charges the same budget, so a client that never reads cannot
    make the server hold more than `limit` bytes for it however many calls it leaves behind.
    """

    __slots__ = ("limit", "streams", "total", "used")

    def __init__(self, limit: int, total: TotalBudget | None = None) -> None:
        self.limit = limit
        self.used = 0
        self.streams: list[EventStream] = []
        """Oldest first: the order events are dropped in."""
        self.total = total
        if total is not None:
            total.budgets.add(self)

    def charge(self, size: int, writer: EventStream) -> None:
        """Count `size` new bytes of `writer`'s; drop old events until the budget holds again.

        The event just written stays, so a reader still connected gets the newest answer.
        """
        self.used += size
        if self.total is not None:
            self.total.used += size
        self.drop_until(lambda: self.used <= self.limit, writer)
        if self.total is not None:
            self.total.shed(writer)

    def drop_until(self, enough: Callable[[], bool], writer: EventStream) -> None:
        """Drop this session's oldest events until `enough()` (`writer`'s newest event stays)."""
        for stream in self.streams:
            keep = 1 if stream is writer else 0
            while not enough() and stream.drop_oldest(keep=keep):
                pass
            if enough():
                return

    def uncharge(self, size: int) -> None:
        """`size` bytes of this session's are free again."""
        self.used -= size
        if self.total is not None:
            self.total.used -= size

    def release(self, stream: EventStream) -> None:
        """`stream` is forgotten: its bytes are free again."""
        if stream in self.streams:
            self.streams.remove(stream)
            self.uncharge(stream.buffered_bytes)

    def close(self) -> None:
        """The session ended: it no longer counts towards the total."""
        for stream in list(self.streams):
            self.release(stream)
        if self.total is not None:
            self.total.budgets.discard(self)


class EventStream:
    """The events of one SSE stream, kept until a client has read them to the end.

    A writer appends JSON-RPC messages and closes the stream after the last one; any
    number of readers `follow` it. With `resumable`, every event carries an id
    `<stream_id>-<n>`, and a client that lost the connection reconnects with
    `Last-Event-ID` and `follow`s from after that event. With a `budget`, the oldest
    events are dropped once the session buffers too much; a reader behind them skips ahead.
    """

    __slots__ = (
        "_budget",
        "_changed",
        "_closed",
        "_drained",
        "_dropped",
        "_frames",
        "_generation",
        "buffered_bytes",
        "resumable",
        "stream_id",
    )

    def __init__(self, stream_id: str, *, resumable: bool, budget: ByteBudget | None = None) -> None:
        self.stream_id = stream_id
        self.resumable = resumable
        self._frames: list[bytes] = []
        self._dropped = 0
        self.buffered_bytes = 0
        self._budget = budget
        if budget is not None:
            budget.streams.append(self)
        self._closed = False
        self._drained = False
        self._changed = anyio.Event()
        self._generation = 0

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def drained(self) -> bool:
        """Whether some reader has read the closed stream to its end."""
        return self._drained

    def _next_id(self) -> str | None:
        return f"{self.stream_id}-{self._dropped + len(self._frames)}" if self.resumable else None

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _add(self, frame: bytes) -> None:
        self._frames.append(frame)
        self.buffered_bytes += len(frame)
        if self._budget is not None:
            self._budget.charge(len(frame), self)
        self._wake()

    def drop_oldest(self, *, keep: int = 0) -> bool:
        """Forget the oldest buffered event; False when only `keep` events are left."""
        if len(self._frames) <= keep:
            return False
        size = len(self._frames.pop(0))
        self._dropped += 1
        self.buffered_bytes -= size
        if self._budget is not None:
            self._budget.uncharge(size)
        return True

    def prime(self, retry_ms: int | None) -> None:
        """Start a resumable stream with an event that has an id and empty data."""
        if self.resumable:
            self._add(sse_frame("", event=None, event_id=self._next_id(), retry_ms=retry_ms))

    def append(self, message: Mapping[str, Any]) -> None:
        """Add one message; encoding never fails (see `encode_message`)."""
        if self._closed:
            return
        self._add(message_frame(message, event_id=self._next_id()))

    def close(self) -> None:
        """No more events; readers end once they have sent what is left."""
        self._closed = True
        self._wake()

    def drop_readers(self) -> None:
        """End the current readers' connections without ending the stream (clients resume)."""
        self._generation += 1
        self._wake()

    def position_after(self, event_id: str) -> int | None:
        """The event number following `event_id`, or None if the id is not one of this stream's."""
        stream_id, _, number = event_id.rpartition("-")
        # ASCII digits only, and short: `"²".isdigit()` holds, and 5000 digits are no event id.
        if stream_id != self.stream_id or not (number.isascii() and number.isdigit()) or len(number) > 18:
            return None
        if int(number) >= self._dropped + len(self._frames):
            return None
        return int(number) + 1

    async def follow(
        self, start: int = 0, *, first_reader: bool = False, ping_interval: float = PING_INTERVAL
    ) -> AsyncIterator[bytes]:
        """Yield events from number `start` on, a ping after each quiet interval, until the end.

        The `first_reader` (the response that opened the stream) also ends if `drop_readers`
        was called before it got to read.
        """
        generation = 0 if first_reader else self._generation
        index = start
        while True:
            while index < self._dropped + len(self._frames):
                index = max(index, self._dropped)
                yield self._frames[index - self._dropped]
                index += 1
            if self._closed:
                self._drained = True
                return
            if generation != self._generation:
                return
            changed = self._changed
            with anyio.move_on_after(ping_interval) as quiet:
                await changed.wait()
            if quiet.cancelled_caught:
                yield PING
