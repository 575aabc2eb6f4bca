"""The handshake-era Streamable HTTP endpoint: sessions, POST/GET/DELETE, SSE answers, resuming."""

from __future__ import annotations

import ipaddress
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol, cast

import anyio
from mcp_types import DEFAULT_NEGOTIATED_VERSION
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpdi import get_access_token, principal_of
from mcpdi.lowlevel import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Connection,
    Invalid,
    Notification,
    Peer,
    Request,
    classify_message,
    error_response,
)
from mcpdi_transport._http._common import (
    NO_BODY,
    AppOptions,
    Running,
    accepts,
    error_body,
    handle_safely,
    json_reply,
    peer_headers,
    receive_json,
    watch_disconnect,
)
from mcpdi_transport._http._session import LegacySession, StreamPeer, supports_resuming
from mcpdi_transport._http._sse import SSE_HEADERS, EventStream, TotalBudget
from mcpdi_transport._outbound import request_key

__all__ = ("LegacyEndpoint",)

logger = logging.getLogger("mcpdi_transport")

_SESSION_HEADER: Final = "mcp-session-id"
_REQUEST_CANCELLED: Final = -32800
_JSON_ONLY_REASON: Final = (
    "this endpoint answers with plain JSON (json_response=True), so nothing can carry a request "
    "to the client; serve SSE answers or use protocol 2026-07-28"
)
_STATELESS_REASON: Final = (
    "this endpoint keeps no sessions (stateless=True), so the client's answer could not be routed "
    "back; serve with sessions or use protocol 2026-07-28"
)


def _header(scope: Scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


def peer_of(scope: Scope, principal: str | None) -> str:
    """Whose share of the session table a new session counts against.

    The token's principal when there is one, else the client's address (an IPv6 client by
    its /64, which one host usually holds whole).
    """
    if principal is not None:
        return f"principal {principal}"
    client = scope.get("client")
    address = str(client[0]) if client else ""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return f"address {address}"
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return f"address {ipaddress.IPv6Network((parsed, 64), strict=False)}"
    return (
        f"address {parsed.ipv4_mapped or parsed}"
        if isinstance(parsed, ipaddress.IPv6Address)
        else f"address {parsed}"
    )


def caller_owns(session: LegacySession) -> bool:
    """Whether the request being served carries the credential that created `session`."""
    return session.principal == principal_of(get_access_token())


async def reply_session_not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await json_reply(scope, receive, send, error_body(INVALID_REQUEST, "Session not found"), status=404)


async def _reply_missing_session(scope: Scope, receive: Receive, send: Send) -> None:
    body = error_body(INVALID_REQUEST, "Bad Request: Missing session ID")
    await json_reply(scope, receive, send, body, status=400)


class SessionMessageHandler(Protocol):
    """How a session's message is served: `handle_safely`, or a wrapper with its signature."""

    async def __call__(
        self,
        running: Running,
        message: Mapping[str, Any],
        connection: Connection,
        peer: Peer,
        *,
        cancel_scope: anyio.CancelScope | None = None,
        answer_late: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> dict[str, Any] | None: ...


class LegacyEndpoint:
    """Serves every request whose `MCP-Protocol-Version` is absent or a handshake version."""

    def __init__(self, options: AppOptions) -> None:
        self.options = options
        self.total_budget = TotalBudget(options.max_buffered_bytes_total, options.max_pending_client_requests)
        """The bytes of buffered events all sessions of this app hold, and their waiting questions."""
        self.sessions: dict[str, LegacySession] = {}
        self.per_peer: dict[str, int] = {}
        """How many of `sessions` each peer (`peer_of`) holds."""
        self.handle_message: SessionMessageHandler = handle_safely
        """Serves one message of a session (sessions shared between processes also store what changed)."""

    async def undelivered(self, session: LegacySession, message: Mapping[str, Any]) -> None:
        """A response or `notifications/cancelled` for nothing this process runs: dropped here.

        Sessions shared between processes pass it on to the one that runs it.
        """

    # -- registry -----------------------------------------------------------------------------

    def add_session(self, session: LegacySession) -> None:
        self.sessions[session.session_id] = session
        self.per_peer[session.peer] = self.per_peer.get(session.peer, 0) + 1

    def end_session(self, session: LegacySession) -> None:
        if self.sessions.get(session.session_id) is session:
            del self.sessions[session.session_id]
            left = self.per_peer.pop(session.peer, 1) - 1
            if left:
                self.per_peer[session.peer] = left
        session.end()

    def end_all(self) -> None:
        for session in list(self.sessions.values()):
            self.end_session(session)

    def sweep_idle(self) -> None:
        """End sessions whose client has done nothing for `session_idle_timeout` seconds.

        A request still running (say, waiting on a question the client never answers) does
        not keep a session alive; an open stream to the client does.
        """
        deadline = anyio.current_time() - self.options.session_idle_timeout
        for session in list(self.sessions.values()):
            if session.idle_since(deadline):
                logger.info("ending idle session %s", session.session_id)
                self.end_session(session)

    def peer_at_cap(self, peer: str) -> bool:
        """Whether `peer` holds `max_sessions_per_peer` sessions even after idle ones ended."""
        if self.per_peer.get(peer, 0) < self.options.max_sessions_per_peer:
            return False
        self.sweep_idle()
        return self.per_peer.get(peer, 0) >= self.options.max_sessions_per_peer

    def make_room(self) -> bool:
        """At the session cap, end a session with no open stream: the least recently active
        one of the peer holding the most sessions (so that a peer filling the table ends its own).

        False when every session has a client connected right now (then a new one is refused).
        """
        if len(self.sessions) < self.options.max_sessions:
            return True
        self.sweep_idle()
        if len(self.sessions) < self.options.max_sessions:
            return True
        abandoned = [session for session in self.sessions.values() if not session.connected]
        if not abandoned:
            return False
        per_peer = self.per_peer
        victim = max(abandoned, key=lambda session: (per_peer.get(session.peer, 0), -session.last_active))
        logger.info(
            "session cap reached: ending session %s, the least recently active of its client's %d",
            victim.session_id,
            per_peer.get(victim.peer, 0),
        )
        self.end_session(victim)
        return True

    def new_session(self, principal: str | None, peer: str) -> LegacySession:
        session = LegacySession(
            session_id=self.options.session_id_prefix + uuid.uuid4().hex
            if self.options.session_id_prefix
            else None,
            principal=principal,
            peer=peer,
            max_buffered_bytes=self.options.max_buffered_bytes,
            client_request_timeout=self.options.client_request_timeout,
            total_budget=self.total_budget,
        )
        self.add_session(session)
        return session

    # -- dispatch -----------------------------------------------------------------------------

    async def __call__(self, running: Running, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        stateless = self.options.stateless
        allowed = "POST" if stateless else "GET, POST, DELETE"
        if method not in allowed.split(", "):
            body = error_body(INVALID_REQUEST, "Method Not Allowed")
            await json_reply(scope, receive, send, body, status=405, headers={"Allow": allowed})
            return
        session: LegacySession | None = None
        session_id = _header(scope, _SESSION_HEADER.encode())
        if session_id is not None and not stateless:
            session = self.sessions.get(session_id)
            if session is None or not caller_owns(session):
                # A session belongs to the credential that created it: to any other it does not exist.
                await reply_session_not_found(scope, receive, send)
                return
            session.touch()
        if method == "POST":
            await self._post(running, session, scope, receive, send)
        elif session is None:
            await _reply_missing_session(scope, receive, send)
        elif method == "GET":
            await self._get(session, scope, receive, send)
        else:
            self.end_session(session)
            await Response(status_code=200, headers={_SESSION_HEADER: session.session_id})(
                scope, receive, send
            )

    async def _post(
        self, running: Running, session: LegacySession | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        wants_json, wants_sse = accepts(scope)
        if self.options.json_response and not wants_json:
            problem = "Not Acceptable: Client must accept application/json"
        elif not self.options.json_response and not (wants_json and wants_sse):
            problem = "Not Acceptable: Client must accept both application/json and text/event-stream"
        else:
            problem = None
        if problem is not None:
            await json_reply(scope, receive, send, error_body(INVALID_REQUEST, problem), status=406)
            return
        body = await receive_json(scope, receive, send)
        if body is NO_BODY:
            return
        kind = classify_message(body)
        if isinstance(kind, Invalid):
            await json_reply(scope, receive, send, error_response(kind.id, kind.error), status=400)
            return
        is_initialize = isinstance(kind, Request) and kind.method == "initialize"
        if session is None and not self.options.stateless:
            if not is_initialize:
                await _reply_missing_session(scope, receive, send)
                return
            principal = principal_of(get_access_token())
            peer = peer_of(scope, principal)
            if self.peer_at_cap(peer):
                problem = (
                    f"Too many open sessions for this client (max_sessions_per_peer="
                    f"{self.options.max_sessions_per_peer}); end one with DELETE or try again later"
                )
                await json_reply(scope, receive, send, error_body(INVALID_REQUEST, problem), status=429)
                return
            if not self.make_room():
                problem = "Too many open sessions, each with a client connected; try again later"
                await json_reply(scope, receive, send, error_body(INTERNAL_ERROR, problem), status=503)
                return
            session = self.new_session(principal, peer)
        message = cast("Mapping[str, Any]", body)
        connection = session.connection if session is not None else self._stateless_connection(scope)
        extra = {_SESSION_HEADER: session.session_id} if session is not None else {}
        if not isinstance(kind, Request):
            if not isinstance(kind, Notification):
                if session is not None and not session.deliver(message):
                    await self.undelivered(session, message)
            elif kind.method == "notifications/cancelled":
                if (
                    session is not None
                    and kind.params is not None
                    and not session.cancel(kind.params.get("requestId"))
                ):
                    await self.undelivered(session, message)
            else:
                peer = StreamPeer(peer_headers(scope), None, None, _STATELESS_REASON)
                await self.handle_message(running, message, connection, peer)
            await Response(status_code=202, headers=extra)(scope, receive, send)
            return
        if self.options.json_response:
            await self._answer_json(running, session, connection, kind, message, scope, receive, send)
        else:
            await self._answer_sse(running, session, connection, kind, message, scope, receive, send)

    def _stateless_connection(self, scope: Scope) -> Connection:
        """A session-less endpoint serves each POST as if the handshake had just happened."""
        connection = Connection.for_legacy_session()
        connection.protocol_version = _header(scope, b"mcp-protocol-version") or DEFAULT_NEGOTIATED_VERSION
        connection.initialized = True
        return connection

    async def _answer_json(
        self,
        running: Running,
        session: LegacySession | None,
        connection: Connection,
        request: Request,
        message: Mapping[str, Any],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        peer = StreamPeer(peer_headers(scope), None, None, _JSON_ONLY_REASON)
        response: dict[str, Any] | None = None
        key = request_key(request.id)
        cancel_scope = anyio.CancelScope()  # one scope: `notifications/cancelled` and a shutdown cancel it
        headers = {_SESSION_HEADER: session.session_id} if session is not None else None
        answered = False

        async def answer_late(late: dict[str, Any]) -> None:
            nonlocal answered
            answered = True
            await json_reply(scope, receive, send, late, headers=headers)

        if session is not None:
            session.running[key] = cancel_scope
        try:
            response = await self.handle_message(
                running, message, connection, peer, cancel_scope=cancel_scope, answer_late=answer_late
            )
        finally:
            if session is not None:
                session.running.pop(key, None)
        if answered:
            return
        if response is None:
            response = error_body(_REQUEST_CANCELLED, "Request cancelled", request.id)
        await json_reply(scope, receive, send, response, headers=headers)

    async def _answer_sse(
        self,
        running: Running,
        session: LegacySession | None,
        connection: Connection,
        request: Request,
        message: Mapping[str, Any],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer on an SSE stream that outlives the HTTP response (a dropped connection is no cancel)."""
        if request.method == "initialize" and request.params is not None:
            version = request.params.get("protocolVersion")
        else:
            version = connection.protocol_version or _header(scope, b"mcp-protocol-version")
        resumable = session is not None and supports_resuming(version if isinstance(version, str) else None)
        if session is not None:
            stream = session.open_stream(
                resumable=resumable, retry_ms=self.options.sse_retry_ms, answering=request_key(request.id)
            )
        else:
            stream = EventStream("0", resumable=False)
        peer = StreamPeer(peer_headers(scope), session, stream, _STATELESS_REASON)
        key = request_key(request.id)
        cancel_scope = anyio.CancelScope()
        if session is not None:
            session.running[key] = cancel_scope

        async def answer_late(late: dict[str, Any]) -> None:
            stream.append(late)
            stream.close()

        async def run_handler() -> None:
            # This task lives in the app's lifespan group: nothing may escape it, or every
            # session and request of the server would end with it.
            try:
                with cancel_scope:
                    response = await self.handle_message(
                        running, message, connection, peer, answer_late=answer_late
                    )
                    if response is not None:
                        stream.append(response)
            except Exception:
                logger.exception("answering %r failed; it gets -32603", request.method)
                stream.append(error_body(INTERNAL_ERROR, "Internal error", request.id))
            finally:
                if session is not None:
                    session.running.pop(key, None)
                    session.touch()
                stream.close()

        running.task_group.start_soon(run_handler)
        extra = [(_SESSION_HEADER.encode(), session.session_id.encode())] if session is not None else []
        await _send_stream(stream, 0, extra, session, scope, receive, send, first_reader=True)

    async def _get(self, session: LegacySession, scope: Scope, receive: Receive, send: Send) -> None:
        if not accepts(scope)[1]:
            body = error_body(INVALID_REQUEST, "Not Acceptable: Client must accept text/event-stream")
            await json_reply(scope, receive, send, body, status=406)
            return
        extra = [(_SESSION_HEADER.encode(), session.session_id.encode())]
        last_event_id = _header(scope, b"last-event-id")
        found = session.find_stream(last_event_id) if last_event_id else None
        if found is not None and found[0] is not session.standalone:
            await _send_stream(found[0], found[1], extra, session, scope, receive, send)
            return
        standalone = session.standalone
        if found is not None and standalone is not None and found[0] is standalone:
            # A client resuming the standalone stream replaces a reader we may still think open.
            standalone.drop_readers()
            start = found[1]
        elif session.standalone_readers:
            body = error_body(INVALID_REQUEST, "Conflict: Only one SSE stream is allowed per session")
            await json_reply(
                scope, receive, send, body, status=409, headers={_SESSION_HEADER: session.session_id}
            )
            return
        else:
            standalone = EventStream(
                "get", resumable=supports_resuming(session.connection.protocol_version), budget=session.budget
            )
            standalone.prime(self.options.sse_retry_ms)
            session.standalone = standalone
            start = 0
        session.standalone_readers += 1
        try:
            await _send_stream(standalone, start, extra, session, scope, receive, send)
        finally:
            session.standalone_readers -= 1
            session.touch()


async def _send_stream(
    stream: EventStream,
    start: int,
    extra_headers: list[tuple[bytes, bytes]],
    session: LegacySession | None,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    first_reader: bool = False,
) -> None:
    """Send `stream` from `start` as the HTTP response until it ends or the client goes away.

    While it is sent the session counts as connected, so it is neither idle nor evicted.
    """
    await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *extra_headers]})

    async def forward(group_scope: anyio.CancelScope) -> None:
        async for frame in stream.follow(start, first_reader=first_reader):
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        group_scope.cancel()

    if session is not None:
        session.readers += 1
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(forward, group.cancel_scope)
            group.start_soon(watch_disconnect, receive, group.cancel_scope)
    finally:
        if session is not None:
            session.readers -= 1
            session.touch()
    await send({"type": "http.response.body", "body": b"", "more_body": False})
