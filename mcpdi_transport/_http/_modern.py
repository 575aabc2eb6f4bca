"""The 2026-07-28 HTTP exchange: one stateless POST in, one JSON-RPC response out (JSON or SSE)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Coroutine, Mapping
from typing import Any, Final, TypeVar, cast

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpdi.lowlevel import (
    INVALID_REQUEST,
    Connection,
    NoBackChannel,
    Notification,
    Request,
    classify_message,
    error_response,
    http_status_for,
    notification_message,
    unsupported_version,
)
from mcpdi_transport._http._common import (
    NO_BODY,
    AppOptions,
    Running,
    accepts,
    error_body,
    handle_safely,
    header_pairs,
    json_reply,
    peer_headers,
    receive_json,
    watch_disconnect,
)
from mcpdi_transport._http._loop import running_loop
from mcpdi_transport._http._sse import PING, PING_INTERVAL, SSE_HEADERS, message_frame
from mcpdi_transport._http._ticker import Ticker

__all__ = ("serve_modern_request",)

logger = logging.getLogger("mcpdi_transport")

_NOT_ONE_MESSAGE: Final = "Body must be a single JSON-RPC request or notification object"

_T = TypeVar("_T")

DISCONNECT_GRACE: Final = 0.05
"""Seconds a JSON-mode handler waits before a client leaving is watched for (and cancels it)."""


class _ExchangePeer:
    """The peer of one modern POST: notifications ride the response stream; no requests."""

    __slots__ = ("_headers", "_scope", "_sink")

    def __init__(self, scope: Scope, sink: MemoryObjectSendStream[bytes] | None) -> None:
        self._scope = scope
        self._headers: Mapping[str, str] | None = None
        self._sink = sink

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The request's headers (`peer_headers`), made on first read: most handlers read none."""
        headers = self._headers
        if headers is None:
            headers = self._headers = peer_headers(self._scope)
        return headers

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        if self._sink is None:
            return  # a plain JSON answer has no place for notifications
        try:
            await self._sink.send(message_frame(notification_message(method, params)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("dropped %s: the response stream is closed", method)

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        raise NoBackChannel(method, "protocol 2026-07-28 has no server-to-client requests")


def _reply(
    scope: Scope, receive: Receive, send: Send, message: Mapping[str, Any]
) -> Coroutine[Any, Any, None]:
    """Send `message` with the HTTP status of its error (200 for a result): await it."""
    error = message.get("error")
    if error is None or not isinstance(error, Mapping):  # `is None` first: the ABC check costs more
        status = 200
    else:
        status = http_status_for(cast("Mapping[str, Any]", error)["code"])
    return json_reply(scope, receive, send, message, status=status)  # no coroutine around it


async def _acknowledge(scope: Scope, receive: Receive, send: Send, body: Mapping[str, Any]) -> None:
    """A notification: 202 at a served version (and dropped), else the version error."""
    if not isinstance(classify_message(body), Notification):
        await json_reply(scope, receive, send, error_body(INVALID_REQUEST, _NOT_ONE_MESSAGE), status=400)
        return
    requested = next((v for k, v in header_pairs(scope) if k == "mcp-protocol-version"), "")
    if requested not in MODERN_PROTOCOL_VERSIONS:
        error = unsupported_version(requested)
        await json_reply(scope, receive, send, error_response(None, error), status=400)
        return
    await Response(status_code=202)(scope, receive, send)


async def serve_modern_request(
    running: Running,
    options: AppOptions,
    scope: Scope,
    receive: Receive,
    send: Send,
    loop: asyncio.AbstractEventLoop | None = None,
) -> None:
    """Answer one POST whose `MCP-Protocol-Version` names a non-handshake version (protocol.md §2.6).

    `loop`: the running asyncio loop, when the caller has it (`running_loop`).
    """
    if scope["method"] != "POST":
        await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
        return
    wants_json, wants_sse = accepts(scope)
    if not wants_json or (not options.json_response and not wants_sse):
        await Response(status_code=406)(scope, receive, send)
        return
    body = await receive_json(scope, receive, send)
    if body is NO_BODY:
        return
    if isinstance(body, dict) and "id" not in body:
        await _acknowledge(scope, receive, send, cast("dict[str, Any]", body))
        return
    request = classify_message(cast("object", body))
    if not isinstance(request, Request):
        await json_reply(scope, receive, send, error_body(INVALID_REQUEST, _NOT_ONE_MESSAGE), status=400)
        return
    if request.method == "subscriptions/listen" and not wants_sse:
        await Response(status_code=406)(scope, receive, send)
        return
    # The runner checks the headers against the body (`http_headers`) and answers a mismatch.
    connection = Connection.for_modern_request(http_headers=header_pairs(scope))
    if options.json_response and request.method != "subscriptions/listen":
        json_peer = _ExchangePeer(scope, None)  # no notifications: in-line JSON
        await _answer_json(running, json_peer, scope, receive, send, request, connection, loop)
    else:
        await _answer_deferred(running, scope, receive, send, request, connection)


class _LateDisconnectWatch:
    """Watches for the client leaving only once the handler has waited for `DISCONNECT_GRACE`.

    Most JSON answers are ready long before that (most without waiting on anything, and
    those get no watch at all), and a watcher task started and cancelled per request would
    cost more than the call; so would a loop timer per request, hence the app's shared
    `Ticker`. Needs asyncio; elsewhere the watcher starts at once.
    """

    __slots__ = ("_cancel_scope", "_key", "_receive", "_task", "_ticker")

    def __init__(self, ticker: Ticker, receive: Receive, cancel_scope: anyio.CancelScope) -> None:
        self._receive = receive
        self._cancel_scope = cancel_scope
        self._task: asyncio.Task[None] | None = None
        self._ticker = ticker
        self._key = ticker.add(self._start)

    def _start(self) -> None:
        self._task = self._ticker.loop.create_task(self._watch())

    async def _watch(self) -> None:
        try:
            await watch_disconnect(self._receive, self._cancel_scope)
        except Exception:
            logger.debug("stopped watching for a disconnect", exc_info=True)

    def stop(self) -> None:
        self._ticker.discard(self._key)
        if self._task is not None:
            self._task.cancel()


def _disconnect_ticker(running: Running, loop: asyncio.AbstractEventLoop) -> Ticker:
    ticker = running.disconnect_ticker
    if ticker is None or ticker.loop is not loop:
        ticker = running.disconnect_ticker = Ticker(loop, DISCONNECT_GRACE, DISCONNECT_GRACE)
    return ticker


async def _answer_json(
    running: Running,
    peer: _ExchangePeer,
    scope: Scope,
    receive: Receive,
    send: Send,
    request: Request,
    connection: Connection,
    loop: asyncio.AbstractEventLoop | None = None,
) -> None:
    """The handler runs in this task; a client that leaves while it waits cancels it.

    On asyncio the handler's first step runs before anything watches (`handle_safely` calls
    `on_wait` only once the handler waits): a handler that answers without waiting on
    anything (most do) cannot be cancelled and is not watched. One that waits gets
    `_LateDisconnectWatch` from then on.
    """
    if loop is None:
        loop = running_loop()  # None: not on asyncio (trio)
    answered = False

    async def answer_late(response: dict[str, Any]) -> None:
        nonlocal answered
        answered = True
        await _reply(scope, receive, send, response)

    if loop is None:
        response: dict[str, Any] | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(watch_disconnect, receive, group.cancel_scope)
            response = await handle_safely(running, request, connection, peer, answer_late=answer_late)
            group.cancel_scope.cancel()
    else:
        watches: list[_LateDisconnectWatch] = []

        def watch(cancel_scope: anyio.CancelScope) -> None:  # the handler waits: a client may leave
            watches.append(_LateDisconnectWatch(_disconnect_ticker(running, loop), receive, cancel_scope))

        try:
            response = await handle_safely(
                running, request, connection, peer, answer_late=answer_late, on_wait=watch, loop=loop
            )
        finally:
            for started in watches:
                started.stop()
    if response is not None and not answered:
        await _reply(scope, receive, send, response)


async def _answer_deferred(
    running: Running, scope: Scope, receive: Receive, send: Send, request: Request, connection: Connection
) -> None:
    """SSE mode: plain JSON (with its HTTP status) unless the handler notifies or runs long.

    Notifications wait in a channel until the first one arrives; then the answer commits
    to `text/event-stream` (status 200) and everything follows as events, with a ping
    comment whenever the handler is quiet for a while.
    """
    sink, events = anyio.create_memory_object_stream[bytes](math.inf)
    peer = _ExchangePeer(scope, sink)
    outcome: list[dict[str, Any] | None] = []

    async def answer_late(response: dict[str, Any]) -> None:
        outcome.append(response)
        sink.close()  # the answer goes out as if the handler had returned it

    async def run_handler() -> None:
        async with sink:
            outcome.append(await handle_safely(running, request, connection, peer, answer_late=answer_late))

    async with events, anyio.create_task_group() as group:
        group.start_soon(run_handler)
        group.start_soon(watch_disconnect, receive, group.cancel_scope)
        first: bytes | None = None
        finished = False
        with anyio.move_on_after(PING_INTERVAL):
            try:
                first = await events.receive()
            except anyio.EndOfStream:
                finished = True
        if finished:
            if outcome and outcome[0] is not None:
                await _reply(scope, receive, send, outcome[0])
            else:
                await Response(status_code=202)(scope, receive, send)
            group.cancel_scope.cancel()
            return
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        await send({"type": "http.response.body", "body": first or PING, "more_body": True})
        while True:
            frame: bytes = PING
            with anyio.move_on_after(PING_INTERVAL):
                try:
                    frame = await events.receive()
                except anyio.EndOfStream:
                    break
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        final = message_frame(outcome[0]) if outcome and outcome[0] is not None else b""
        await send({"type": "http.response.body", "body": final, "more_body": False})
        group.cancel_scope.cancel()
