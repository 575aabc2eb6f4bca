"""A handshake-era HTTP session: its connection, SSE streams, running requests and pending questions."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any, Final

import anyio
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS
from starlette.types import Scope

from mcpdi.lowlevel import Connection, NoBackChannel, notification_message
from mcpdi_transport._http._common import peer_headers
from mcpdi_transport._http._loop import running_loop
from mcpdi_transport._http._sse import ByteBudget, EventStream, TotalBudget
from mcpdi_transport._outbound import OutboundRequests, request_key

__all__ = ("LegacySession", "StreamPeer", "supports_resuming")

_RESUMABLE_FROM: Final = "2025-11-25"
_KEPT_FINISHED_STREAMS: Final = 64

DEFAULT_MAX_BUFFERED_BYTES: Final = 16 * 1024 * 1024
"""Bytes of unread or resumable events one session may hold before its oldest are dropped."""

DEFAULT_MAX_BUFFERED_BYTES_TOTAL: Final = 256 * 1024 * 1024
"""Bytes of buffered events all sessions of a process may hold; past it the heaviest sheds first."""

DEFAULT_CLIENT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds a server-to-client request (elicitation, sampling, roots) waits for the answer."""


def supports_resuming(version: str | None) -> bool:
    """Clients at 2025-11-25 and later understand priming events (id, empty data)."""
    if version not in KNOWN_PROTOCOL_VERSIONS:
        return False
    return KNOWN_PROTOCOL_VERSIONS.index(version) >= KNOWN_PROTOCOL_VERSIONS.index(_RESUMABLE_FROM)


def current_time(loop: asyncio.AbstractEventLoop | None = None) -> float:
    """`anyio.current_time()`, read straight from the loop on asyncio (the same clock).

    anyio asks which async library runs on every call, which costs a request more than
    reading the clock; sessions are touched on every request. `loop`: the running loop,
    when the caller has it (else it is asked for).
    """
    if loop is None:
        loop = running_loop()
    return anyio.current_time() if loop is None else loop.time()  # None: not on asyncio (trio)


class LegacySession:
    """One `Mcp-Session-Id`: created by `initialize`, ended by DELETE or idleness."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        principal: str | None = None,
        peer: str = "",
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
        total_budget: TotalBudget | None = None,
    ) -> None:
        self.session_id = session_id or uuid.uuid4().hex
        self.principal = principal
        """Who created the session (`principal_of` its token); to any other caller it does not exist."""
        self.peer = peer
        """Whose share of the session table it counts against (empty for a replica of a shared one)."""
        self.connection = Connection.for_legacy_session()
        self.connection.standalone = self._notify_standalone
        self.streams: dict[str, EventStream] = {}
        self.standalone: EventStream | None = None
        self.standalone_readers = 0
        self.readers = 0
        """Open HTTP responses of this session (SSE streams being sent): a client is there."""
        self.running: dict[str, anyio.CancelScope | None] = {}
        """The requests running, by id (`request_key`): each one's cancel scope, or None while
        it has none yet (a JSON answer's handler gets one when it first waits)."""
        waiting = None if total_budget is None else total_budget.waiting
        self.outbound = OutboundRequests(timeout=client_request_timeout, budget=waiting)
        self.budget = ByteBudget(max_buffered_bytes, total_budget)
        self.last_active = current_time()
        self.ended = False
        self._stream_count = 0

    async def _notify_standalone(self, method: str, params: Mapping[str, Any] | None) -> None:
        """A notification outside any request: on the GET stream, once the client opened it (kept
        for it to resume while it reconnects); dropped before that, as the official SDK drops it."""
        if self.ended or self.standalone is None:
            return
        self.standalone.append(notification_message(method, params))

    def touch(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """The client did something: sent a request or read a stream (`loop`: the running loop, if known)."""
        self.last_active = current_time(loop)

    @property
    def connected(self) -> bool:
        """Whether the client holds a response of this session open right now."""
        return self.readers > 0

    def idle_since(self, deadline: float) -> bool:
        """No open response, and no client activity since `deadline`.

        Requests still running do not count: one that waits on a client who left must
        not keep the session alive (its question times out, or the session ends).
        """
        return not self.connected and self.last_active < deadline

    def open_stream(self, *, resumable: bool, retry_ms: int, answering: str | None = None) -> EventStream:
        """A new stream, primed; `answering` names the request it answers (its id as JSON)."""
        stream = self.new_stream(resumable=resumable, answering=answering)
        stream.prime(retry_ms)
        self.streams[stream.stream_id] = stream
        self._forget_finished()
        return stream

    def new_stream(self, *, resumable: bool, answering: str | None = None) -> EventStream:
        """The stream of one answer, numbered within the session."""
        self._stream_count += 1
        return EventStream(str(self._stream_count), resumable=resumable, budget=self.budget)

    def _forget_finished(self) -> None:
        """Drop streams read to the end, and the oldest finished ones beyond a cap."""
        for stream_id, stream in list(self.streams.items()):
            if stream.drained:
                self._forget(stream_id)
        finished = [stream_id for stream_id, stream in self.streams.items() if stream.closed]
        for stream_id in finished[: max(0, len(finished) - _KEPT_FINISHED_STREAMS)]:
            self._forget(stream_id)

    def _forget(self, stream_id: str) -> None:
        self.budget.release(self.streams.pop(stream_id))

    def find_stream(self, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream holding `last_event_id` and the index to resume from."""
        candidates = [*self.streams.values(), *([self.standalone] if self.standalone else [])]
        for stream in candidates:
            position = stream.position_after(last_event_id)
            if position is not None:
                return stream, position
        return None

    def deliver(self, message: Mapping[str, Any]) -> bool:
        """Route the client's response to the server-to-client request waiting for it (False: none here)."""
        return self.outbound.deliver(message)

    def cancel(self, request_id: object) -> bool:
        """Cancel the running request `request_id`; False when it does not run here."""
        scope = self.running.get(request_key(request_id))
        if scope is None:
            return False  # not running, or answered in one step and being stored: nothing to stop
        scope.cancel()
        return True

    def end(self) -> None:
        """Stop everything the session runs; pending questions fail, streams close."""
        self.ended = True
        for scope in self.running.values():
            if scope is not None:
                scope.cancel()
        self.outbound.fail_all()
        for stream in self.streams.values():
            stream.close()
            self.budget.release(stream)
        if self.standalone is not None:
            self.standalone.close()
            self.budget.release(self.standalone)
        self.budget.close()


class StreamPeer:
    """The peer of one legacy request: notifications and questions ride its SSE stream.

    Without a stream (plain JSON answers, or a session-less endpoint) notifications are
    dropped and questions fail with `NoBackChannel`.
    """

    __slots__ = ("_headers", "_no_channel_reason", "_scope", "_session", "_stream")

    def __init__(
        self,
        scope: Scope,
        session: LegacySession | None,
        stream: EventStream | None,
        no_channel_reason: str,
    ) -> None:
        self._scope = scope
        self._headers: Mapping[str, str] | None = None
        self._session = session
        self._stream = stream
        self._no_channel_reason = no_channel_reason

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The request's headers (`peer_headers`), made on first read: most handlers read none."""
        headers = self._headers
        if headers is None:
            headers = self._headers = peer_headers(self._scope)
        return headers

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        if self._stream is not None:
            self._stream.append(notification_message(method, params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        session, stream = self._session, self._stream
        if session is None or stream is None:
            raise NoBackChannel(method, self._no_channel_reason)

        async def append(message: dict[str, Any]) -> None:
            stream.append(message)

        return await session.outbound.send(method, params, append, gone="The session ended")

    def close_sse_stream(self) -> None:
        """End the client's connection to this request's stream; it resumes with `Last-Event-ID`."""
        if self._stream is not None:
            self._stream.drop_readers()
