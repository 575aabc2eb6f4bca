"""The handshake-era Streamable HTTP endpoint: POST/GET/DELETE, SSE answers, resuming.

Where sessions live (this process, or a store shared by several) is the `SessionRegistry`
the endpoint is given; the endpoint speaks HTTP.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

import anyio
from mcp_types import DEFAULT_NEGOTIATED_VERSION
from starlette.types import Message

from mcpdi import get_access_token, principal_of
from mcpdi.lowlevel import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Connection,
    Invalid,
    Notification,
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
    receive_json,
    watch_disconnect,
)
from mcpdi_transport._http._exchange import HttpExchange
from mcpdi_transport._http._legacy_session import LegacySession, StreamPeer, supports_resuming
from mcpdi_transport._http._registry import Refusal, SessionRegistry
from mcpdi_transport._http._sse import SSE_HEADERS, EventStream
from mcpdi_transport._outbound import request_key
from mcpdi_transport._redis import StoreUnavailable

__all__ = ("LegacyEndpoint", "peer_of")

logger = logging.getLogger("mcpdi_transport")

_SESSION_HEADER: Final = "mcp-session-id"
_REQUEST_CANCELLED: Final = -32800
_SESSION_METHODS: Final = frozenset({"GET", "POST", "DELETE"})
_STATELESS_METHODS: Final = frozenset({"POST"})
_JSON_ONLY_REASON: Final = (
    "this endpoint answers with plain JSON (json_response=True), so nothing can carry a request "
    "to the client; serve SSE answers or use protocol 2026-07-28"
)
_STATELESS_REASON: Final = (
    "this endpoint keeps no sessions (stateless=True), so the client's answer could not be routed "
    "back; serve with sessions or use protocol 2026-07-28"
)


def peer_of(exchange: HttpExchange, principal: str | None) -> str:
    """Whose share of the session table a new session counts against.

    The token's principal when there is one, else the client's address (an IPv6 client by
    its /64, which one host usually holds whole).
    """
    if principal is not None:
        return f"principal {principal}"
    client = exchange.scope.get("client")
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


async def _reply_missing_session(exchange: HttpExchange) -> None:
    await exchange.reply(error_body(INVALID_REQUEST, "Bad Request: Missing session ID"), status=400)


class LegacyEndpoint:
    """Serves every request whose `MCP-Protocol-Version` is absent or a handshake version."""

    def __init__(self, options: AppOptions, sessions: SessionRegistry) -> None:
        self.options = options
        self.sessions = sessions
        self.serve: Callable[[Running, HttpExchange], Awaitable[None]] = (
            self._serve_guarded if sessions.remote else self._serve
        )
        """Serve one request (a remote registry's outage answered with 503)."""

    async def _serve_guarded(self, running: Running, exchange: HttpExchange) -> None:
        started = False
        send = exchange.send

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self._serve(running, exchange.sending_through(send_tracked))
        except StoreUnavailable as error:
            if started:
                logger.error("a shared-session request ended early: %s", error)
                return
            await exchange.reply(error_body(INTERNAL_ERROR, str(error)), status=503)

    async def _serve(self, running: Running, exchange: HttpExchange) -> None:
        method = exchange.method
        stateless = self.options.stateless
        allowed = "POST" if stateless else "GET, POST, DELETE"
        if method not in (_STATELESS_METHODS if stateless else _SESSION_METHODS):
            body = error_body(INVALID_REQUEST, "Method Not Allowed")
            await exchange.reply(body, status=405, headers={"Allow": allowed})
            return
        session: LegacySession | None = None
        session_id = exchange.headers.get(_SESSION_HEADER)
        if session_id is not None and not stateless:
            session = await self.sessions.attach(session_id)
            if session is None or not caller_owns(session):
                # A session belongs to the credential that created it: to any other it does not exist.
                await exchange.reply(error_body(INVALID_REQUEST, "Session not found"), status=404)
                return
            session.touch(exchange.loop)
        if method == "POST":
            await self._post(running, session, exchange)
        elif session is None:
            await _reply_missing_session(exchange)
        elif method == "GET":
            await self._get(session, exchange)
        else:
            await self.sessions.end(session)
            await exchange.answer_empty({_SESSION_HEADER: session.session_id})

    async def _post(self, running: Running, session: LegacySession | None, exchange: HttpExchange) -> None:
        wants_json, wants_sse = accepts(exchange.scope)
        if self.options.json_response and not wants_json:
            problem = "Not Acceptable: Client must accept application/json"
        elif not self.options.json_response and not (wants_json and wants_sse):
            problem = "Not Acceptable: Client must accept both application/json and text/event-stream"
        else:
            problem = None
        if problem is not None:
            await exchange.reply(error_body(INVALID_REQUEST, problem), status=406)
            return
        body = await receive_json(exchange.scope, exchange.receive, exchange.send)
        if body is NO_BODY:
            return
        kind = classify_message(body)
        if isinstance(kind, Invalid):
            await exchange.reply(error_response(kind.id, kind.error), status=400)
            return
        if session is None and not self.options.stateless:
            if not (isinstance(kind, Request) and kind.method == "initialize"):
                await _reply_missing_session(exchange)
                return
            principal = principal_of(get_access_token())
            opened = await self.sessions.open(principal, peer_of(exchange, principal))
            if isinstance(opened, Refusal):
                await exchange.reply(opened.body(), status=opened.status)
                return
            session = opened
        message = cast("Mapping[str, Any]", body)
        if not isinstance(kind, Request):
            await self._take(running, session, kind, message, exchange)
        elif self.options.json_response:
            await self._answer_json(running, session, kind, exchange)
        else:
            await self._answer_sse(running, session, kind, message, exchange)

    async def _take(
        self,
        running: Running,
        session: LegacySession | None,
        kind: object,
        message: Mapping[str, Any],
        exchange: HttpExchange,
    ) -> None:
        """A notification or a response from the client: routed, then 202."""
        if not isinstance(kind, Notification):
            if session is not None and not session.deliver(message):
                await self.sessions.undelivered(session, message)
        elif kind.method == "notifications/cancelled":
            if (
                session is not None
                and kind.params is not None
                and not session.cancel(kind.params.get("requestId"))
            ):
                await self.sessions.undelivered(session, message)
        else:
            peer = StreamPeer(exchange.scope, None, None, _STATELESS_REASON)
            if session is None:
                await handle_safely(running, message, self._stateless_connection(exchange), peer)
            else:
                await self.sessions.serve(running, session, message, peer)
        await exchange.accept({_SESSION_HEADER: session.session_id} if session is not None else None)

    def _stateless_connection(self, exchange: HttpExchange) -> Connection:
        """A session-less endpoint serves each POST as if the handshake had just happened."""
        connection = Connection.for_legacy_session()
        version = exchange.headers.get("mcp-protocol-version")
        connection.protocol_version = version or DEFAULT_NEGOTIATED_VERSION
        connection.initialized = True
        return connection

    async def _answer_json(
        self, running: Running, session: LegacySession | None, request: Request, exchange: HttpExchange
    ) -> None:
        peer = StreamPeer(exchange.scope, None, None, _JSON_ONLY_REASON)
        response: dict[str, Any] | None = None
        key = request_key(request.id)
        headers = {_SESSION_HEADER: session.session_id} if session is not None else None
        answered = False

        async def answer_late(late: dict[str, Any]) -> None:
            nonlocal answered
            answered = True
            await exchange.reply(late, headers=headers)

        # One scope, made once the handler waits: `notifications/cancelled` and a shutdown cancel it.
        if session is None:
            response = await handle_safely(
                running,
                request,
                self._stateless_connection(exchange),
                peer,
                answer_late=answer_late,
                loop=exchange.loop,
            )
        else:
            requests = session.running
            requests[key] = None  # running, with no scope to cancel until it waits
            try:
                response = await self.sessions.serve(
                    running,
                    session,
                    request,
                    peer,
                    answer_late=answer_late,
                    on_wait=functools.partial(requests.__setitem__, key),
                    loop=exchange.loop,
                )
            finally:
                requests.pop(key, None)
        if answered:
            return
        if response is None:
            response = error_body(_REQUEST_CANCELLED, "Request cancelled", request.id)
        await exchange.reply(response, headers=headers)

    async def _answer_sse(
        self,
        running: Running,
        session: LegacySession | None,
        request: Request,
        message: Mapping[str, Any],
        exchange: HttpExchange,
    ) -> None:
        """Answer on an SSE stream that outlives the HTTP response (a dropped connection is no cancel)."""
        connection = session.connection if session is not None else self._stateless_connection(exchange)
        if request.method == "initialize" and request.params is not None:
            version = request.params.get("protocolVersion")
        else:
            version = connection.protocol_version or exchange.headers.get("mcp-protocol-version")
        resumable = session is not None and supports_resuming(version if isinstance(version, str) else None)
        if session is not None:
            stream = session.open_stream(
                resumable=resumable, retry_ms=self.options.sse_retry_ms, answering=request_key(request.id)
            )
        else:
            stream = EventStream("0", resumable=False)
        peer = StreamPeer(exchange.scope, session, stream, _STATELESS_REASON)
        key = request_key(request.id)
        cancel_scope = running.cancel_scope()
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
                    if session is None:
                        response = await handle_safely(
                            running, message, connection, peer, answer_late=answer_late
                        )
                    else:
                        response = await self.sessions.serve(
                            running, session, message, peer, answer_late=answer_late
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
        await _send_stream(exchange, stream, 0, extra, session, first_reader=True)

    async def _get(self, session: LegacySession, exchange: HttpExchange) -> None:
        if not accepts(exchange.scope)[1]:
            body = error_body(INVALID_REQUEST, "Not Acceptable: Client must accept text/event-stream")
            await exchange.reply(body, status=406)
            return
        extra = [(_SESSION_HEADER.encode(), session.session_id.encode())]
        last_event_id = exchange.headers.get("last-event-id")
        found = await self.sessions.find_stream(session, last_event_id) if last_event_id else None
        if found is not None and found[0] is not session.standalone:
            await _send_stream(exchange, found[0], found[1], extra, session)
            return
        standalone = session.standalone
        if found is not None and standalone is not None and found[0] is standalone:
            # A client resuming the standalone stream replaces a reader we may still think open.
            standalone.drop_readers()
            start = found[1]
        elif session.standalone_readers:
            body = error_body(INVALID_REQUEST, "Conflict: Only one SSE stream is allowed per session")
            await exchange.reply(body, status=409, headers={_SESSION_HEADER: session.session_id})
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
            await _send_stream(exchange, standalone, start, extra, session)
        finally:
            session.standalone_readers -= 1
            session.touch()


async def _send_stream(
    exchange: HttpExchange,
    stream: EventStream,
    start: int,
    extra_headers: list[tuple[bytes, bytes]],
    session: LegacySession | None,
    *,
    first_reader: bool = False,
) -> None:
    """Send `stream` from `start` as the HTTP response until it ends or the client goes away.

    While it is sent the session counts as connected, so it is neither idle nor evicted.
    """
    send = exchange.send
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
            group.start_soon(watch_disconnect, exchange.receive, group.cancel_scope)
    finally:
        if session is not None:
            session.readers -= 1
            session.touch()
    await send({"type": "http.response.body", "body": b"", "more_body": False})
