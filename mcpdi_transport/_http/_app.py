"""`build_http_app`: the Starlette app serving a server over Streamable HTTP in both protocol eras."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi import AuthSettings, TokenVerifier
from mcpdi.lowlevel import CustomRoute, serving_http_request
from mcpdi_transport._http._bearer import BearerGate, MetadataEndpoint, metadata_paths
from mcpdi_transport._http._common import AppOptions, Running, hand_over_body, header_values
from mcpdi_transport._http._exchange import HttpExchange
from mcpdi_transport._http._legacy import LegacyEndpoint
from mcpdi_transport._http._legacy_session import (
    DEFAULT_CLIENT_REQUEST_TIMEOUT,
    DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_BUFFERED_BYTES_TOTAL,
)
from mcpdi_transport._http._loop import running_loop
from mcpdi_transport._http._modern import serve_modern_request
from mcpdi_transport._http._registry import LocalSessions, SessionRegistry
from mcpdi_transport._http._security import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_SIZE,
    BodyLimit,
    BodyReader,
    SecurityPolicy,
    announced_security_policy,
    replaying,
)
from mcpdi_transport._http._shared import SharedSessions
from mcpdi_transport._http._signals import drain_on_signals
from mcpdi_transport._http._store import SessionStore
from mcpdi_transport._listen import ServesMCP
from mcpdi_transport._outbound import DEFAULT_MAX_PENDING_CLIENT_REQUESTS
from mcpdi_transport._serving_options import options_for_app

__all__ = ("build_http_app", "starlette_route")


logger = logging.getLogger("mcpdi_transport")


class _Endpoint:
    """The ASGI app at the MCP path: reads the body, checks headers, then routes by `MCP-Protocol-Version`.

    The body is read first, within its limits (`BodyReader`: 413, 408), and handed to the
    era's endpoint in the scope (`hand_over_body`). A header naming anything but a
    handshake version (unknown values included) goes to the stateless 2026-07-28
    exchange; an absent header or a handshake version goes to the session endpoint
    (protocol.md §1.6).
    """

    def __init__(
        self, policy: SecurityPolicy, options: AppOptions, sessions: SessionStore | None, body: BodyReader
    ) -> None:
        self.policy = policy
        self.body = body
        self.options = options
        registry: SessionRegistry = (
            LocalSessions(options) if sessions is None else SharedSessions(options, sessions)
        )
        self.legacy = LegacyEndpoint(options, registry)
        self.running: Running | None = None
        self.abandoned = 0
        """Calls answered at the end of a shutdown grace whose handlers would not stop."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        running = self.running  # (a request may come before the lifespan: `running_loop` then)
        loop = running_loop() if running is None else running.home.running()
        read = await self.body.read(scope, receive, send, loop)
        if read is None:
            return
        body, buffered = read
        headers = header_values(scope)
        rejection = self.policy.check(scope["method"], headers)
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        running = self.running
        if running is None:
            msg = "The MCP server is not running: serve this app with its lifespan (uvicorn does so)."
            await PlainTextResponse(msg, status_code=503)(scope, receive, send)
            return
        hand_over_body(scope, body)
        if buffered:
            receive = replaying(buffered, receive)
        version = headers.get("mcp-protocol-version")
        with serving_http_request(scope):
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                await serve_modern_request(running, self.options, scope, receive, send, loop)
            else:
                await self.legacy.serve(running, HttpExchange(scope, receive, send, headers, loop))

    def drain(self, grace: float) -> None:
        """Shutdown began: requests get `grace` seconds, then a JSON-RPC error; streams end.

        Call from the event loop's thread (`loop.call_soon_threadsafe` from a signal handler);
        a second call changes nothing.
        """
        running = self.running
        if running is None or running.draining:
            return
        running.runner.server.end_listen_streams()  # a listen stream has no end of its own to wait for
        running.drain(grace, then=self._drained)

    def _drained(self, stuck: int) -> None:
        self.abandoned += stuck
        self.legacy.sessions.end_all()

    async def drain_when(self, signalled: anyio.Event, grace: float) -> None:
        await signalled.wait()
        self.drain(grace)


class _MCPApp(Starlette):
    """The Starlette app, with requests at the MCP path taken straight to the MCP endpoint.

    Starlette's stack (error middleware, body limit, exception middleware, router, route)
    costs about as much per request as the rest of a bare endpoint; at the MCP path it
    would only lead to the endpoint, which limits its body itself and answers every error
    of a request. So those requests go to the endpoint alone: should an exception escape it
    all the same, the ASGI server answers 500 "Internal Server Error" when nothing was sent
    yet and logs it, which is what Starlette's error middleware would do before handing the
    exception on to it. With `debug` on, that middleware stays in front, for its traceback
    page. Everything else, and every request once the app has middleware or exception
    handlers added after it was built, takes the whole stack.
    """

    def __init__(
        self, *, mcp_path: str, mcp_endpoint: ASGIApp, body_limit: Middleware, **options: Any
    ) -> None:
        super().__init__(middleware=[body_limit], **options)
        self._mcp_path = mcp_path
        self._body_limit = body_limit
        self._mcp_endpoint = mcp_endpoint
        self._direct: ASGIApp | None = None

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        if self.user_middleware != [self._body_limit] or self.exception_handlers:
            self._direct = None
        elif self.debug:
            self._direct = ServerErrorMiddleware(self._mcp_endpoint, debug=True)
        else:
            self._direct = self._mcp_endpoint
        return stack

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.middleware_stack is None:
            self.middleware_stack = self.build_middleware_stack()
        direct = self._direct
        if direct is not None and scope["type"] == "http" and scope["path"] == self._mcp_path:
            scope["app"] = self
            await direct(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def _checked_prefix(prefix: str) -> str:
    # Session ids travel in a header and in gateway rules: visible ASCII of a safe kind only.
    if not re.fullmatch(r"[A-Za-z0-9._-]{0,32}", prefix):
        msg = f"session_id_prefix {prefix!r} may hold at most 32 letters, digits, '-', '_' or '.'"
        raise ValueError(msg)
    return prefix


def starlette_route(route: CustomRoute) -> Route:
    """A server's `custom_route` as the Starlette route that serves it."""
    methods = list(route.methods) if route.methods is not None else None
    return Route(
        route.path,
        endpoint=route.endpoint,
        methods=methods,
        name=route.name,
        include_in_schema=route.include_in_schema,
    )


def build_http_app(
    server: ServesMCP,
    *,
    json_response: bool = False,
    stateless: bool = False,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    dns_rebinding_protection: bool | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    sse_retry_ms: int = 1000,
    max_sessions: int = 10_000,
    max_sessions_per_peer: int = 1000,
    shutdown_grace: float = 10.0,
    session_idle_timeout: float = 30 * 60.0,
    client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
    max_buffered_bytes_total: int = DEFAULT_MAX_BUFFERED_BYTES_TOTAL,
    max_pending_client_requests: int = DEFAULT_MAX_PENDING_CLIENT_REQUESTS,
    session_id_prefix: str = "",
    sessions: SessionStore | None = None,
    debug: bool | None = None,
    routes: Sequence[BaseRoute] = (),
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> Starlette:
    """A Starlette app serving `server` at `path` over Streamable HTTP, both protocol eras.

    Every way of serving a server over HTTP comes here (`mcp.run("http")`,
    `streamable_http_app()`, `serve_http`, `mcpdi run`, `mcpdi dev`), and this is where the
    server's own `serving_options` are read: its bearer auth, its `custom_route`s (served
    before `routes`) and its debug flag, each overridden by the keyword of the same name.

    - `json_response`: answer requests with one JSON object instead of an SSE stream (no
      notifications during a call, and no server-to-client requests in the handshake era).
    - `stateless`: no `Mcp-Session-Id` sessions for handshake-era clients (the 2026-07-28
      era is stateless anyway).
    - `host` is where the app will be bound. Host and Origin checks (against DNS
      rebinding and foreign web pages) are on unless `dns_rebinding_protection=False`;
      `allowed_hosts` / `allowed_origins` default to the loopback names and the bound
      address, any port (`"name:*"` patterns). Checks that are off are logged at start.
    - `max_body_size`: larger request bodies get 413; `body_timeout`: a body that takes
      longer to arrive gets 408.
    - `sse_retry_ms`: reconnect delay suggested to clients that can resume a stream.
    - `max_sessions`: at the cap, the least recently active session without an open
      stream is ended for a new one; `session_idle_timeout` ends sessions whose client has
      done nothing for that long, even while a request waits on that client. With
      `sessions=`, the cap (and `max_sessions_per_peer`) counts the sessions of every process
      sharing the store.
    - `max_sessions_per_peer`: sessions one peer may hold (one token's principal with bearer
      auth, else one client address, an IPv6 /64); more get 429. At `max_sessions`, the
      session ended for a newcomer is one of the peer holding the most. Behind a proxy,
      let uvicorn take the client's address from `X-Forwarded-For` (`forwarded_allow_ips`).
    - `shutdown_grace`: at SIGTERM or Ctrl-C (whoever serves the app: `mcpdi run`, your own
      uvicorn), running calls get this many seconds; then each is answered with `-32603`
      "The server is shutting down" and the open streams end, so the server can exit.
    - `client_request_timeout`: seconds a server-to-client request (elicitation, sampling,
      roots) waits for the client's answer before the call fails with `-32001`.
    - `max_buffered_bytes`: events one session keeps for reading and resuming; past it the
      oldest are dropped. `max_buffered_bytes_total`: what all sessions of the process keep
      together (256 MiB by default); past it the session holding the most loses its oldest
      events first, and a warning is logged once per overflow. A client resuming past dropped
      events gets the oldest ones still kept, as with the per-session budget. The total is
      per process: each process behind a gateway has its own. With `sessions=`, a session's
      `max_buffered_bytes` counts the events of every process serving it, together.
    - `max_pending_client_requests`: server-to-client requests all handshake-era sessions of
      the process may have waiting for an answer at once (10,000 by default); past it a call
      asking one more fails at once with `-32603` naming the limit, and a warning is logged
      once per overflow.
    - `session_id_prefix`: starts every `Mcp-Session-Id` this process mints, so a gateway
      in front of several processes can send a session's requests to the one that holds it
      (letters, digits, `-`, `_` and `.` only).
    - `sessions`: keep handshake-era sessions in this store (`RedisSessions(url)`), shared
      by every process using it, so any process serves any session, mid-call answers and
      resumption included; by default each process keeps its own in memory.
    - `routes`: plain Starlette routes served next to the MCP endpoint (health checks, ...).
    - `token_verifier` and `auth`: bearer-token auth on the MCP endpoint (401/403 with a
      `WWW-Authenticate` challenge) and the Protected Resource Metadata document.

    The app's lifespan enters `server.running()` once; serve it with a server that runs
    lifespans (uvicorn does). Starlette does not run the lifespan of a mounted sub-app, so
    when mounting this app into another one, enter `app.router.lifespan_context(app)` from
    the outer app's lifespan.
    """
    own = options_for_app(server, token_verifier=token_verifier, auth=auth, debug=debug)
    token_verifier, auth, debug = own.token_verifier, own.auth, own.debug
    routes = [*map(starlette_route, own.routes), *routes]
    options = AppOptions(
        json_response=json_response,
        stateless=stateless,
        sse_retry_ms=sse_retry_ms,
        max_sessions=max_sessions,
        max_sessions_per_peer=max_sessions_per_peer,
        session_idle_timeout=session_idle_timeout,
        client_request_timeout=client_request_timeout,
        max_buffered_bytes=max_buffered_bytes,
        max_buffered_bytes_total=max_buffered_bytes_total,
        max_pending_client_requests=max_pending_client_requests,
        session_id_prefix=_checked_prefix(session_id_prefix),
    )
    policy = announced_security_policy(
        host,
        dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    if sessions is not None and stateless:
        msg = "sessions= keeps handshake-era sessions, which stateless=True turns off: pass one of the two"
        raise ValueError(msg)
    endpoint = _Endpoint(policy, options, sessions, BodyReader(max_body_size, body_timeout))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        async with server.running() as runner, anyio.create_task_group() as group:
            endpoint.running = Running(runner, group)
            group.start_soon(endpoint.legacy.sessions.run, endpoint.running)
            signalled = anyio.Event()
            group.start_soon(endpoint.drain_when, signalled, shutdown_grace)
            try:
                with drain_on_signals(signalled.set):
                    yield
            finally:
                endpoint.running = None
                endpoint.legacy.sessions.end_all()
                group.cancel_scope.cancel()

    mcp_endpoint: ASGIApp = endpoint
    metadata_routes: list[BaseRoute] = []
    if token_verifier is not None and auth is not None:
        # The token is checked before the body is read: the endpoint reads it behind the gate.
        mcp_endpoint = BearerGate(endpoint, token_verifier, auth, path, policy)
        metadata = MetadataEndpoint(auth, path, policy)
        metadata_routes = [Route(p, endpoint=metadata, methods=["GET"]) for p in metadata_paths(auth, path)]
        if not auth.resource_server_url and not policy.check_host:
            logger.warning(
                "bearer auth without AuthSettings(resource_server_url=...) and without a Host check: "
                "the auth challenge and metadata name whatever host the client sent; set "
                "resource_server_url (or allowed_hosts)"
            )
    # The endpoint limits its own body: the app's limit is for the other routes.
    body_limit = Middleware(
        BodyLimit, max_body_size=max_body_size, body_timeout=body_timeout, exempt_path=path
    )
    app = _MCPApp(
        mcp_path=path,
        mcp_endpoint=mcp_endpoint,
        body_limit=body_limit,
        debug=debug,
        routes=[Route(path, endpoint=mcp_endpoint), *metadata_routes, *routes],
        lifespan=lifespan,
    )
    app.state.mcpdi_drain = endpoint.drain
    app.state.mcpdi_abandoned = lambda: endpoint.abandoned
    return app
