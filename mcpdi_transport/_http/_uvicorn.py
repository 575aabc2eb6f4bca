"""uvicorn, hardened: a deadline for request headers, a drain on shutdown, rate-limited error logs."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import math
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, Literal, Protocol

import anyio
import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = (
    "DrainingServer",
    "HttpParser",
    "RateLimitedLogs",
    "header_deadline_protocol",
    "pick_http_parser",
    "serve_on_socket",
)

HttpParser = Literal["auto", "h11", "httptools"]

logger = logging.getLogger("mcpdi_transport")

STARTUP_TIMEOUT: Final = 30.0
"""Seconds uvicorn may take to start accepting connections."""


async def serve_on_socket(
    server: uvicorn.Server,
    sock: socket.socket,
    *,
    started: Callable[[], None],
    stopping: Callable[[], None] | None = None,
    close_socket: bool = True,
) -> None:
    """Run `server` on the listening `sock` until it stops or the caller is cancelled.

    `started()` is called once uvicorn accepts connections (never, if it stops first).
    On the way out `stopping()` runs, then uvicorn is told to exit; its own graceful
    shutdown is shielded from the caller's cancellation, so it always finishes.
    """
    stopped = anyio.Event()

    async def run() -> None:
        try:
            with anyio.CancelScope(shield=True):
                await server.serve(sockets=[sock])
        finally:
            if close_socket:
                sock.close()
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not server.started and not stopped.is_set():
                    await anyio.sleep(0.01)
            if server.started:
                started()
            await stopped.wait()
        finally:
            if stopping is not None:
                stopping()
            server.should_exit = True


def pick_http_parser(http: HttpParser) -> Literal["h11", "httptools"]:
    """The parser `http` names; `auto` is httptools when it is installed (`mcpdi[fast]`), else h11."""
    if http == "auto":
        return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
    return http


def header_deadline_protocol(header_timeout: float, http: HttpParser = "h11") -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol, closing connections whose request headers do not arrive in time.

    uvicorn itself only times out idle keep-alive connections, and every byte received
    resets that timer, so a client trickling one header byte at a time would hold a
    connection for ever. `http` picks the parser: h11, or httptools (see `pick_http_parser`).
    """
    if pick_http_parser(http) == "httptools":
        return _httptools_header_deadline(header_timeout)

    class HeaderDeadline(H11Protocol):
        _timer: _HeaderTimer | None = None
        _since: float = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._since = time.monotonic()
            self._timer = _HeaderTimer(header_timeout, self.loop, transport, self._awaits_headers)
            self._timer.arm()
            shed_slowest(self, self.connections, self.config.limit_concurrency)

        def _awaits_headers(self) -> bool:
            return self.conn.their_state is h11.IDLE

        def waiting_on_client_since(self) -> float | None:
            """Since when the server waits for this client's request or body; None while it answers."""
            return self._since if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) else None

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._timer is not None and not self._awaits_headers():
                self._timer.disarm()  # the headers are in; the body has its own deadline

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._since = time.monotonic()
            if self._timer is not None:
                self._timer.arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.disarm()
            super().connection_lost(exc)

    return HeaderDeadline


class _Waiting(Protocol):
    transport: asyncio.Transport

    def waiting_on_client_since(self) -> float | None: ...


_SHED_HEADROOM: Final = 8
"""Connections kept free below the cap: uvicorn also counts the tasks of requests just answered."""


def shed_slowest(newcomer: object, connections: set[Any], cap: int | None) -> None:
    """At `cap` connections, close the one whose client has kept the server waiting longest.

    That is a client still to send its request's headers or body (slow ones first), or an
    idle keep-alive connection; a connection whose request is being answered (a running
    call, an SSE stream) is never shed. Without such a connection, uvicorn answers 503.
    """
    if cap is None or len(connections) < cap - min(_SHED_HEADROOM, cap // 8):
        return
    slowest: _Waiting | None = None
    oldest = math.inf
    for connection in connections:
        if connection is newcomer:
            continue
        since = connection.waiting_on_client_since()
        if since is not None and since < oldest and not connection.transport.is_closing():
            slowest, oldest = connection, since
    if slowest is not None:
        logger.info("at the connection cap (%d): closing the connection waiting longest on its client", cap)
        connections.discard(slowest)  # not counted against the cap while its close is under way
        slowest.transport.close()


class _HeaderTimer:
    """One connection's header deadline: closes it unless `awaits_headers()` turned false in time."""

    __slots__ = ("_awaits_headers", "_handle", "_loop", "_seconds", "_transport")

    def __init__(
        self,
        seconds: float,
        loop: asyncio.AbstractEventLoop,
        transport: asyncio.Transport,
        awaits_headers: Callable[[], bool],
    ) -> None:
        self._seconds = seconds
        self._loop = loop
        self._transport = transport
        self._awaits_headers = awaits_headers
        self._handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        self.disarm()
        self._handle = self._loop.call_later(self._seconds, self._expire)

    def disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _expire(self) -> None:
        self._handle = None
        if self._awaits_headers() and not self._transport.is_closing():
            self._transport.close()


def _httptools_header_deadline(header_timeout: float) -> type[asyncio.Protocol]:
    """The httptools twin of the h11 `HeaderDeadline`: its parser reports complete headers itself."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HttpToolsHeaderDeadline(HttpToolsProtocol):
        _timer: _HeaderTimer | None = None
        _requests_begun = 0
        _requests_read = 0
        _responses_done = 0
        _since: float = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._since = time.monotonic()
            self._timer = _HeaderTimer(header_timeout, self.loop, transport, self._awaits_headers)
            self._timer.arm()
            shed_slowest(self, self.connections, self.config.limit_concurrency)

        def _awaits_headers(self) -> bool:
            return self._requests_begun == self._responses_done  # no (pipelined) request's headers are in

        def waiting_on_client_since(self) -> float | None:
            """Since when the server waits for this client's request or body; None while it answers."""
            return self._since if self._requests_read == self._responses_done else None

        def on_message_complete(self) -> None:
            self._requests_read += 1
            super().on_message_complete()

        def on_headers_complete(self) -> None:
            self._requests_begun += 1
            if self._timer is not None:
                self._timer.disarm()  # the headers are in; the body has its own deadline
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            self._responses_done += 1
            self._since = time.monotonic()
            super().on_response_complete()
            if self._timer is not None and self._awaits_headers():
                self._timer.arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.disarm()
            super().connection_lost(exc)

    return HttpToolsHeaderDeadline


class DrainingServer(uvicorn.Server):
    """A uvicorn server that tells the app when shutdown begins (SIGTERM, SIGINT).

    `exit_deadline` seconds after the signal, a process still alive while some calls could
    not be stopped (`abandoned()`: a synchronous tool blocking its thread; each was answered
    with an error already) exits without waiting for them: Python would wait for the
    thread however long it takes.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        on_exit: Callable[[], None],
        *,
        abandoned: Callable[[], int] = lambda: 0,
        exit_deadline: float | None = None,
    ) -> None:
        super().__init__(config)
        self._on_exit = on_exit
        self._abandoned = abandoned
        self._exit_deadline = exit_deadline
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._loop is not None and not self.should_exit:
            self._loop.call_soon_threadsafe(self._on_exit)  # a signal handler may not touch the loop
            if self._exit_deadline is not None:
                watchdog = threading.Timer(self._exit_deadline, self._exit_without_stuck_calls)
                watchdog.daemon = True  # a process that ends in time does not wait for it
                watchdog.start()
        super().handle_exit(sig, frame)

    def _exit_without_stuck_calls(self) -> None:
        stuck = self._abandoned()
        if not stuck:
            return
        logger.warning("exiting without waiting for %d call(s) still blocking their threads", stuck)
        logging.shutdown()
        sys.stderr.flush()
        os._exit(1)


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
