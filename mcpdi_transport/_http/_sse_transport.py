"""`build_sse_app`: the legacy HTTP+SSE transport (protocol 2024-11-05), as the official SDK serves it.

A client opens `GET /sse`: an event stream whose first event, `endpoint`, names
`/messages/?session_id=<hex>`. Each JSON-RPC message it POSTs there is answered `202`;
the answers, the notifications of a call and the server-to-client requests (elicitation
mid-call) go out on the stream as `message` events. The session belongs to the stream:
when the client leaves, its calls are cancelled and the session ends.

Sessions are capped as the Streamable HTTP app caps them (`max_sessions`,
`max_sessions_per_peer`), and a shutdown gives running calls the same grace. A session
lives in the process holding its stream: the POSTs naming it must reach that process.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import parse_qs, quote

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi import AuthSettings, TokenVerifier, get_access_token, principal_of
from mcpdi.lowlevel import (
    Invalid,
    MCPError,
    Notification,
    Request,
    RequestId,
    classify_message,
    encode_message,
    parse_json,
    serving_http_request,
)
from mcpdi_transport._http._app import starlette_route
from mcpdi_transport._http._bearer import BearerGate, MetadataEndpoint, metadata_paths
from mcpdi_transport._http._common import Running, handle_safely, header_values
from mcpdi_transport._http._exchange import HttpExchange
from mcpdi_transport._http._legacy import peer_of
from mcpdi_transport._http._legacy_session import DEFAULT_CLIENT_REQUEST_TIMEOUT
from mcpdi_transport._http._security import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_SIZE,
    BodyLimit,
    SecurityPolicy,
    announced_security_policy,
)
from mcpdi_transport._http._signals import drain_on_signals
from mcpdi_transport._http._sse_session import SsePeer, SseSession, sse_event
from mcpdi_transport._listen import ServesMCP
from mcpdi_transport._outbound import (
    DEFAULT_MAX_PENDING_CLIENT_REQUESTS,
    Waiting,
    request_key,
)
from mcpdi_transport._serving_options import options_for_app

__all__ = ("build_sse_app",)

logger = logging.getLogger("mcpdi_transport")

PING_INTERVAL: Final = 15.0
"""Seconds of silence after which the stream carries a comment, so proxies keep it open."""


class _SseEndpoints:
    """`GET <sse_path>` (the stream) and `POST <message_path>?session_id=` (the messages)."""

    def __init__(
        self,
        policy: SecurityPolicy,
        advertised_path: str,
        *,
        client_request_timeout: float,
        max_pending_client_requests: int = DEFAULT_MAX_PENDING_CLIENT_REQUESTS,
        max_sessions: int,
        max_sessions_per_peer: int,
    ) -> None:
        self.policy = policy
        self.advertised_path = advertised_path
        """The message path the `endpoint` event names (after the ASGI `root_path`)."""
        self.client_request_timeout = client_request_timeout
        self.waiting = Waiting(max_pending_client_requests)
        """The server-to-client requests all streams of this app wait on together."""
        self.max_sessions = max_sessions
        self.max_sessions_per_peer = max_sessions_per_peer
        self.sessions: dict[str, SseSession] = {}
        self.per_peer: Counter[str] = Counter()
        """How many of `sessions` each peer (`peer_of`: a token's principal, else an address) holds."""
        self.running: Running | None = None
        self.abandoned = 0
        """Calls answered at the end of a shutdown grace whose handlers would not stop."""

    async def stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        rejection = self.policy.check(scope["method"], header_values(scope))
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        if self.running is None:
            msg = "The MCP server is not running: serve this app with its lifespan (uvicorn does so)."
            await PlainTextResponse(msg, status_code=503)(scope, receive, send)
            return
        principal = principal_of(get_access_token())
        peer = peer_of(HttpExchange(scope, receive, send), principal)
        refusal = self._refusal(peer)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        session_id = uuid.uuid4().hex
        endpoint = quote(scope.get("root_path", "").rstrip("/") + self.advertised_path)
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"connection", b"keep-alive"),
            (b"x-accel-buffering", b"no"),
        ]
        async with anyio.create_task_group() as group:
            session = SseSession(
                principal,
                peer,
                group,
                client_request_timeout=self.client_request_timeout,
                waiting=self.waiting,
            )
            self.sessions[session_id] = session
            self.per_peer[peer] += 1
            try:
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                data = sse_event("endpoint", f"{endpoint}?session_id={session_id}")
                await send({"type": "http.response.body", "body": data, "more_body": True})
                group.start_soon(self._until_disconnect, receive, group.cancel_scope)
                await self._pump(session, send)
            except OSError:
                pass  # the client is gone
            finally:
                del self.sessions[session_id]
                self.per_peer[peer] -= 1
                if not self.per_peer[peer]:
                    del self.per_peer[peer]
                session.close()
                group.cancel_scope.cancel()
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _refusal(self, peer: str) -> Response | None:
        """429 for a peer holding `max_sessions_per_peer` streams, 503 at `max_sessions`; else None.

        Every session has its client connected (the session is its stream), so none is
        ended to make room, as the Streamable HTTP app would end an abandoned one.
        """
        if self.per_peer[peer] >= self.max_sessions_per_peer:
            cap = self.max_sessions_per_peer
            msg = (
                f"Too many open sessions for this client (max_sessions_per_peer={cap}); "
                "close one of its event streams or try again later"
            )
            return PlainTextResponse(msg, status_code=429)
        if len(self.sessions) >= self.max_sessions:
            msg = "Too many open sessions, each with a client connected; try again later"
            return PlainTextResponse(msg, status_code=503)
        return None

    @staticmethod
    async def _until_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()

    @staticmethod
    async def _pump(session: SseSession, send: Send) -> None:
        receiver = session.receiver
        while True:
            body = b": ping\r\n\r\n"
            with anyio.move_on_after(PING_INTERVAL):
                try:
                    body = sse_event("message", encode_message(await receiver.receive()).decode())
                except anyio.EndOfStream:
                    return
            await send({"type": "http.response.body", "body": body, "more_body": True})

    async def message(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        headers = header_values(scope)
        rejection = self.policy.check("POST", headers)
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        session, refusal = self._session_of(scope)
        if session is None:
            await PlainTextResponse(refusal, status_code=404 if refusal.startswith("Could") else 400)(
                scope, receive, send
            )
            return
        body = b""
        while True:
            chunk = await receive()
            if chunk["type"] == "http.disconnect":
                return
            body += chunk.get("body", b"")
            if not chunk.get("more_body", False):
                break
        try:
            kind = classify_message(parse_json(body))
        except MCPError:
            kind = None
        if kind is None or isinstance(kind, Invalid):
            await PlainTextResponse("Could not parse message", status_code=400)(scope, receive, send)
            return
        await PlainTextResponse("Accepted", status_code=202)(scope, receive, send)
        with serving_http_request(scope):
            self._dispatch(session, kind, cast("Mapping[str, Any]", parse_json(body)), headers)

    def _session_of(self, scope: Scope) -> tuple[SseSession | None, str]:
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id")
        if not values:
            return None, "session_id is required"
        try:
            session_id = uuid.UUID(hex=values[0]).hex
        except ValueError:
            return None, "Invalid session ID"
        session = self.sessions.get(session_id)
        if session is None or session.principal != principal_of(get_access_token()):
            return None, "Could not find session"
        return session, ""

    def _dispatch(
        self, session: SseSession, kind: object, message: Mapping[str, Any], headers: Mapping[str, str]
    ) -> None:
        running = self.running
        if running is None:
            return
        if isinstance(kind, Notification) and kind.method == "notifications/cancelled":
            params = kind.params or {}
            scope = session.calls.get(request_key(params.get("requestId")))
            if scope is not None:
                scope.cancel()
            return
        if not isinstance(kind, Request | Notification):
            session.outbound.deliver(message)
            return
        peer = SsePeer(session, headers)
        request_id: RequestId | None = kind.id if isinstance(kind, Request) else None

        async def answer() -> None:
            key = request_key(request_id)
            scope = anyio.CancelScope()
            if request_id is not None:
                session.calls[key] = scope
            try:
                response = await handle_safely(
                    running, message, session.connection, peer, cancel_scope=scope, answer_late=session.write
                )
                if response is not None:
                    await session.write(response)
            finally:
                if request_id is not None and session.calls.get(key) is scope:
                    del session.calls[key]

        session.group.start_soon(answer)

    def drain(self, grace: float) -> None:
        """Shutdown began: calls get `grace` seconds, then `-32603`; then the streams end."""
        if self.running is not None:
            self.running.drain(grace, then=self._drained)

    def _drained(self, stuck: int) -> None:
        self.abandoned += stuck
        for session in list(self.sessions.values()):
            session.finish()

    async def drain_when(self, signalled: anyio.Event, grace: float) -> None:
        await signalled.wait()
        self.drain(grace)

    def end_all(self) -> None:
        for session in list(self.sessions.values()):
            session.close()
            session.group.cancel_scope.cancel()


class _Asgi:
    """An ASGI callable Starlette's `Route` serves as an app (a bare method it would take for an endpoint)."""

    __slots__ = ("app",)

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _message_path(path: str) -> str:
    if "://" in path or path.startswith("//") or "?" in path or "#" in path:
        msg = f"message_path {path!r} is not a relative path (e.g., '/messages/')"
        raise ValueError(msg)
    return path if path.startswith("/") else "/" + path


def build_sse_app(
    server: ServesMCP,
    *,
    sse_path: str = "/sse",
    message_path: str = "/messages/",
    mount_path: str = "",
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    dns_rebinding_protection: bool | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
    max_pending_client_requests: int = DEFAULT_MAX_PENDING_CLIENT_REQUESTS,
    max_sessions: int = 10_000,
    max_sessions_per_peer: int = 1000,
    shutdown_grace: float = 10.0,
    debug: bool | None = None,
    routes: Sequence[BaseRoute] = (),
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> Starlette:
    """A Starlette app serving `server` over the legacy HTTP+SSE transport (protocol 2024-11-05).

    `GET sse_path` opens a session's event stream; its messages are POSTed to
    `message_path?session_id=<hex>` (202; 400 without a session id or with a body that is
    not one JSON-RPC message; 404 for a session that is unknown, ended, or opened with
    another token's principal). The server's own `serving_options` (bearer auth on both
    paths, `custom_route`s, debug) hold unless a keyword overrides them; Host and Origin
    checks, the body limit, `client_request_timeout`, `max_pending_client_requests` (for all
    streams of the process together), the session caps (`max_sessions`,
    `max_sessions_per_peer`: past them a new stream gets 503 or 429, since every session
    has its client connected) and the `shutdown_grace` are those of `build_http_app`.
    `mount_path` (the SDK 1.x's) is where the app will be mounted: the `endpoint` event
    names `mount_path + message_path` (and any ASGI `root_path` before it).
    """
    if max_body_size <= 0:
        msg = "max_body_size must be a positive number of bytes"
        raise ValueError(msg)
    message_path = _message_path(message_path)
    own = options_for_app(server, token_verifier=token_verifier, auth=auth, debug=debug)
    token_verifier, auth, debug = own.token_verifier, own.auth, own.debug
    policy = announced_security_policy(
        host,
        dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    endpoints = _SseEndpoints(
        policy,
        mount_path.rstrip("/") + message_path,
        client_request_timeout=client_request_timeout,
        max_pending_client_requests=max_pending_client_requests,
        max_sessions=max_sessions,
        max_sessions_per_peer=max_sessions_per_peer,
    )
    stream: ASGIApp = _Asgi(endpoints.stream)
    messages: ASGIApp = BodyLimit(endpoints.message, max_body_size=max_body_size, body_timeout=body_timeout)
    metadata_routes: list[BaseRoute] = []
    if token_verifier is not None and auth is not None:
        stream = BearerGate(stream, token_verifier, auth, sse_path, policy)
        messages = BearerGate(messages, token_verifier, auth, sse_path, policy)
        metadata = MetadataEndpoint(auth, sse_path, policy)
        metadata_routes = [
            Route(p, endpoint=metadata, methods=["GET"]) for p in metadata_paths(auth, sse_path)
        ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        async with server.running() as runner, anyio.create_task_group() as group:
            endpoints.running = Running(runner, group)
            signalled = anyio.Event()
            # At SIGTERM or Ctrl-C the calls get the grace, then the streams end (no wait on the clients).
            group.start_soon(endpoints.drain_when, signalled, shutdown_grace)
            try:
                with drain_on_signals(signalled.set):
                    yield
            finally:
                endpoints.running = None
                endpoints.end_all()
                group.cancel_scope.cancel()

    body_limit = Middleware(
        BodyLimit, max_body_size=max_body_size, body_timeout=body_timeout, exempt_path=message_path
    )
    app = Starlette(
        debug=debug,
        routes=[
            Route(sse_path, endpoint=stream, methods=["GET"]),
            Mount(message_path, app=messages),
            *metadata_routes,
            *map(starlette_route, own.routes),
            *routes,
        ],
        middleware=[body_limit],
        lifespan=lifespan,
    )
    app.state.mcpdi_drain = endpoints.drain
    app.state.mcpdi_abandoned = lambda: endpoints.abandoned
    return app
