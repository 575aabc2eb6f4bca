"""Server-sent events: the frame format, and a replayable log of one stream's events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import anyio

__all__ = ("PING", "SSE_HEADERS", "EventStream", "dump_json", "sse_frame")

SSE_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
)

PING: Final = b": ping\r\n\r\n"
"""A comment line: keeps proxies from closing an idle stream; clients ignore it."""

PING_INTERVAL: Final = 15.0


_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""What `json.dumps(..., separators=(",", ":"), ensure_ascii=False)` builds on every call."""


def dump_json(message: Mapping[str, Any]) -> str:
    """Compact JSON on one line (JSON escapes every newline inside strings)."""
    return _ENCODER.encode(message)


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


class EventStream:
    """The events of one SSE stream, kept until a client has read them to the end.

    A writer appends JSON-RPC messages and closes the stream after the last one; any
    number of readers `follow` it. With `resumable`, every event carries an id
    `<stream_id>-<n>`, and a client that lost the connection reconnects with
    `Last-Event-ID` and `follow`s from after that event.
    """

    __slots__ = ("_changed", "_closed", "_drained", "_frames", "_generation", "resumable", "stream_id")

    def __init__(self, stream_id: str, *, resumable: bool) -> None:
        self.stream_id = stream_id
        self.resumable = resumable
        self._frames: list[bytes] = []
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
        return f"{self.stream_id}-{len(self._frames)}" if self.resumable else None

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def prime(self, retry_ms: int | None) -> None:
        """Start a resumable stream with an event that has an id and empty data."""
        if self.resumable:
            self._frames.append(sse_frame("", event=None, event_id=self._next_id(), retry_ms=retry_ms))
            self._wake()

    def append(self, message: Mapping[str, Any]) -> None:
        if self._closed:
            return
        self._frames.append(sse_frame(dump_json(message), event_id=self._next_id()))
        self._wake()

    def close(self) -> None:
        """No more events; readers end once they have sent what is left."""
        self._closed = True
        self._wake()

    def drop_readers(self) -> None:
        """End the current readers' connections without ending the stream (clients resume)."""
        self._generation += 1
        self._wake()

    def position_after(self, event_id: str) -> int | None:
        """The index following `event_id`, or None if the id is not one of this stream's."""
        stream_id, _, number = event_id.rpartition("-")
        if stream_id != self.stream_id or not number.isdigit() or int(number) >= len(self._frames):
            return None
        return int(number) + 1

    async def follow(
        self, start: int = 0, *, first_reader: bool = False, ping_interval: float = PING_INTERVAL
    ) -> AsyncIterator[bytes]:
        """Yield frames from `start` on, a ping after each quiet interval, until the stream ends.

        The `first_reader` (the response that opened the stream) also ends if `drop_readers`
        was called before it got to read.
        """
        generation = 0 if first_reader else self._generation
        index = start
        while True:
            while index < len(self._frames):
                yield self._frames[index]
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
