"""uvicorn, hardened: a deadline for request headers, a drain on shutdown, rate-limited error logs."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ("DrainingServer", "RateLimitedLogs", "header_deadline_protocol")


def header_deadline_protocol(header_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing connections whose request headers do not arrive in time.

    uvicorn itself only times out idle keep-alive connections, and every byte received
    resets that timer, so a client trickling one header byte at a time would hold a
    connection for ever.
    """

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # the headers are in; the body has its own deadline

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


class DrainingServer(uvicorn.Server):
    """A uvicorn server that tells the app when shutdown begins (SIGTERM, SIGINT)."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_exit = on_exit
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._loop is not None and not self.should_exit:
            self._loop.call_soon_threadsafe(self._on_exit)  # a signal handler may not touch the loop
        super().handle_exit(sig, frame)


class RateLimitedLogs(logging.Filter):
    """Lets through at most `burst` records of one kind per `window` seconds, then counts.

    A peer that repeats a bad request (or a flood of failed accepts) must not write
    megabytes of log: the next record let through says how many similar ones were dropped.
    """

    def __init__(self, burst: int = 10, window: float = 60.0) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._seen: dict[tuple[str, int, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg))
        now = time.monotonic()
        start, count, dropped = self._seen.get(key, (now, 0, 0))
        if now - start > self.window:
            start, count = now, 0
        if count >= self.burst:
            self._seen[key] = (start, count, dropped + 1)
            return False
        if dropped:
            record.msg = f"{record.msg} ({dropped} similar lines suppressed)"
            dropped = 0
        self._seen[key] = (start, count + 1, dropped)
        if len(self._seen) > 1024:  # many kinds: forget the oldest
            self._seen.pop(next(iter(self._seen)))
        return True
