"""What both HTTP eras share: Accept matching, header views, JSON replies, and the state of a running app."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
from starlette.types import Receive, Scope, Send

from mcpdi.lowlevel import INTERNAL_ERROR, MCPError, Request, encode_message, error_response, parse_json
from mcpdi_transport._http._late_scope import EARLY, LateScope, resumed, scope_before
from mcpdi_transport._http._loop import HomeLoop
from mcpdi_transport._serving import runner_failure

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from mcpdi.lowlevel import Connection, Peer, Runner
    from mcpdi_transport._http._ticker import Ticker

__all__ = (
    "JSON",
    "NO_BODY",
    "SHUTTING_DOWN",
    "AppOptions",
    "LateAnswer",
    "Running",
    "accepts",
    "error_body",
    "hand_over_body",
    "handle_safely",
    "header_lists",
    "header_pairs",
    "header_values",
    "json_reply",
    "peer_headers",
    "receive_json",
    "watch_disconnect",
)

JSON: Final = "application/json"
_JSON_CONTENT_TYPE: Final = (b"content-type", JSON.encode())

NO_BODY: Final = object()
"""What `receive_json` returns when there is no message to serve."""

logger = logging.getLogger("mcpdi_transport")


@dataclass(frozen=True, slots=True)
class AppOptions:
    """How `build_http_app` was asked to serve (decided once, read per request)."""

    json_response: bool
    stateless: bool
    sse_retry_ms: int
    max_sessions: int
    session_idle_timeout: float
    client_request_timeout: float
    max_buffered_bytes: int
    session_id_prefix: str = ""
    max_sessions_per_peer: int = 1000
    max_buffered_bytes_total: int = 256 * 1024 * 1024
    max_pending_client_requests: int = 10_000


SHUTTING_DOWN: Final = "The server is shutting down"

_CANCELLED_ANSWERS: Final = 0.5
"""Seconds the cancelled requests have to answer at the end of the grace, before they are answered."""


LateAnswer = Callable[[], Awaitable[None]]
"""Sends a request's shutdown answer through its own response, from another task."""


@dataclass(slots=True)
class Running:
    """What the app's lifespan provides to requests: the server's runner and a task group.

    `in_flight` holds the cancel scope of every request being handled, so that a shutdown
    can end them all with a JSON-RPC error once its grace is over (`stop_requests`), and
    for each the way to answer it from outside (`answer_stuck`) should its handler not
    stop when cancelled (a synchronous tool in a thread cannot be interrupted).
    """

    runner: Runner[Any]
    task_group: TaskGroup
    in_flight: dict[anyio.CancelScope, LateAnswer | None] = field(
        default_factory=dict[anyio.CancelScope, "LateAnswer | None"]
    )
    draining: bool = False
    """Shutdown began: requests running now get the grace."""
    abandoned: int = 0
    """Requests answered by `answer_stuck` whose handlers still run (in threads, say)."""
    stopping: bool = False
    disconnect_ticker: Ticker | None = None
    """The deadlines after which JSON answers still running watch for the client leaving."""
    _cancel_scope_type: type[anyio.CancelScope] | None = None
    home: HomeLoop = field(default_factory=HomeLoop)
    """The lifespan's loop: its requests find theirs there (`HomeLoop.running`)."""

    def cancel_scope(self) -> anyio.CancelScope:
        """A new `anyio.CancelScope`, the very kind anyio makes on this event loop (`scope_kind`)."""
        return self.scope_kind()()

    def scope_kind(self) -> type[anyio.CancelScope]:
        """The kind of `anyio.CancelScope` anyio makes on this event loop.

        `anyio.CancelScope()` asks which async library runs on every call, a good part of
        what a scope costs a request; the app's requests all run on its lifespan's loop, so
        the answer is kept from the first one.
        """
        kind = self._cancel_scope_type
        if kind is None:
            kind = self._cancel_scope_type = type(anyio.CancelScope())
        return kind

    def stop_requests(self) -> None:
        """Answer every request still running with `-32603` "The server is shutting down"."""
        self.stopping = True
        for scope in list(self.in_flight):
            scope.cancel()

    def drain(self, grace: float, *, then: Callable[[int], None]) -> None:
        """Shutdown began: requests get `grace` seconds, then `-32603`; then `then(stuck)` ends the streams.

        `stuck` counts the requests answered from outside because their handlers would not
        stop (`answer_stuck`). Call from the event loop's thread; a second call changes nothing.
        """
        if self.draining:
            return
        self.draining = True

        async def stop_after_grace() -> None:
            with anyio.move_on_after(grace):
                while self.in_flight:
                    await anyio.sleep(0.05)
            self.stop_requests()
            with anyio.move_on_after(_CANCELLED_ANSWERS):  # the cancelled handlers write their answers
                while self.in_flight:
                    await anyio.sleep(0.01)
            stuck = await self.answer_stuck()
            if stuck:
                logger.warning(
                    "%d call(s) did not stop when cancelled at the end of the shutdown grace (a "
                    "synchronous tool blocking its thread?): answered with -32603, left to finish",
                    stuck,
                )
            await anyio.sleep(0)
            then(stuck)

        self.task_group.start_soon(stop_after_grace)

    async def answer_stuck(self) -> int:
        """Answer the requests still running after `stop_requests` from outside their handlers.

        Their handlers go on (their late answers are dropped); the number answered is returned.
        """
        stuck = [answer for answer in self.in_flight.values() if answer is not None]
        self.in_flight.clear()
        self.abandoned += len(stuck)
        for answer in stuck:
            try:
                await answer()
            except Exception:
                logger.debug("a shutdown answer could not be sent", exc_info=True)
        return len(stuck)


def accepts(scope: Scope) -> tuple[bool, bool]:
    """Whether the `Accept` header covers (JSON, SSE); wildcards count, parameters do not."""
    decoded = _decoded(scope)
    if not decoded.repeated:  # the request's one `Accept` value, if any: no walk through the headers
        value = decoded.first.get("accept")
        return _accepted(() if value is None else (value,))
    return _accepted(tuple(value for name, value in decoded.pairs if name == "accept"))


@functools.lru_cache(maxsize=64)
def _accepted(values: tuple[str, ...]) -> tuple[bool, bool]:
    """`accepts` for the `Accept` values sent; a client sends the same ones on every request."""
    media: set[str] = set()
    for value in values:
        media.update(part.split(";")[0].strip().lower() for part in value.split(","))
    everything = "*/*" in media
    return (
        everything or JSON in media or "application/*" in media,
        everything or "text/event-stream" in media or "text/*" in media,
    )


_HEADERS_KEY: Final = "mcpdi.headers"
"""Where a request's decoded headers are kept in its ASGI scope (scopes carry per-request
extensions; Starlette keeps its own there too): every check reads them, none decodes again."""


@dataclass(slots=True)
class _DecodedHeaders:
    pairs: list[tuple[str, str]]
    first: dict[str, str]
    repeated: bool


_DECODED_LIMIT: Final = 1024
_decoded_pairs: dict[tuple[bytes, ...], tuple[str, str]] = {}
"""Raw header pairs to their decoded form: a client sends the same headers on every request,
so most are decoded once (bounded: emptied when full; credentials and session ids, which a
client does not share with others and which outlive nothing here, are never kept)."""
_NOT_KEPT: Final = frozenset({b"authorization", b"proxy-authorization", b"cookie", b"mcp-session-id"})


def _decoded_pair(raw: Sequence[bytes]) -> tuple[str, str]:
    name, value = raw
    # Field values exclude surrounding whitespace (RFC 9110 §5.5); not every server strips it.
    pair = (name.decode("latin-1").lower(), value.decode("latin-1").strip(" \t"))
    if isinstance(raw, tuple) and name.lower() not in _NOT_KEPT:  # ASGI allows lists: not hashable
        if len(_decoded_pairs) >= _DECODED_LIMIT:
            _decoded_pairs.clear()
        _decoded_pairs[raw] = pair
    return pair


def _decoded(scope: Scope) -> _DecodedHeaders:
    decoded: _DecodedHeaders | None = scope.get(_HEADERS_KEY)
    if decoded is None:
        known = _decoded_pairs.get
        raw_headers: list[tuple[bytes, bytes]] = scope["headers"]
        try:
            pairs = [known(raw) or _decoded_pair(raw) for raw in raw_headers]
        except TypeError:  # Tuples from every server we know; ASGI allows lists, which are not hashable.
            pairs = [_decoded_pair(raw) for raw in raw_headers]
        first: dict[str, str] = dict(pairs)  # each name's last value: the first while none repeats
        repeated = len(first) != len(pairs)
        if repeated:
            first = {}
            for name, value in pairs:
                first.setdefault(name, value)
        decoded = scope[_HEADERS_KEY] = _DecodedHeaders(pairs, first, repeated)
    return decoded


def header_pairs(scope: Scope) -> list[tuple[str, str]]:
    """The request's headers as (lower-cased name, value) pairs, repeats kept."""
    return _decoded(scope).pairs


def header_values(scope: Scope) -> Mapping[str, str]:
    """Lower-cased names to the first value of each header."""
    return _decoded(scope).first


def header_lists(scope: Scope) -> dict[str, str | Sequence[str]]:
    """Lower-cased names to a value, or to the list of values of a repeated header."""
    grouped = _repeats_grouped(scope)
    if grouped is None:
        return dict(header_values(scope))
    return {name: values[0] if len(values) == 1 else values for name, values in grouped.items()}


def peer_headers(scope: Scope) -> Mapping[str, str]:
    """Lower-cased names to values; a repeated header's values joined by `, ` as HTTP allows."""
    decoded = _decoded(scope)
    if not decoded.repeated:
        return dict(decoded.first)
    grouped = _repeats_grouped(scope)
    if grouped is None:
        return dict(header_values(scope))
    return {name: ", ".join(values) for name, values in grouped.items()}


def _repeats_grouped(scope: Scope) -> dict[str, list[str]] | None:
    """Each name's values in order when some header is repeated; None when none is."""
    decoded = _decoded(scope)
    if not decoded.repeated:
        return None
    grouped: dict[str, list[str]] = {}
    for name, value in decoded.pairs:
        grouped.setdefault(name, []).append(value)
    return grouped


async def handle_safely(
    running: Running,
    message: Mapping[str, Any] | Request,
    connection: Connection,
    peer: Peer,
    *,
    cancel_scope: anyio.CancelScope | None = None,
    answer_late: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    on_wait: Callable[[anyio.CancelScope], None] | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
) -> dict[str, Any] | None:
    """`serve_message` (a failure of the runner itself is `-32603`, not a 500), counted in flight.

    A request still running when the server stops (`Running.stop_requests`) is answered
    with `-32603` "The server is shutting down". The handler runs in `cancel_scope` (a new
    one by default): a caller that cancels for its own reasons (a client that left)
    passes the scope it cancels, so one scope serves both; the answer is then None.
    `answer_late` sends that shutdown answer from another task if the handler does not
    stop when cancelled (the caller then drops whatever this returns later).

    On asyncio the handler's first step runs before the scope is entered (`LateScope`): a
    handler that answers without waiting once is neither cancellable nor in flight, and
    one that waits is, from then on. Without a `cancel_scope`, the scope is made only then,
    and `on_wait` is given it (to cancel it from elsewhere) before the handler goes on.
    `loop` is the running loop where the caller has it (`running_loop`), else it is asked for.
    """
    if isinstance(message, Request):
        is_request, request_id = True, message.id
    else:
        is_request, request_id = "id" in message and "method" in message, message.get("id")
    handling = running.runner.handle(message, connection, peer)  # `serve_message`, inline
    before = scope_before(running.scope_kind() if cancel_scope is None else type(cancel_scope), loop)
    waiting_on: Any = None
    if before is not EARLY:
        try:
            waiting_on = handling.send(None)
        except StopIteration as done:
            return cast("dict[str, Any] | None", done.value)  # answered in one step: nothing could cancel it
        except Exception:
            return runner_failure(message)
    scope = running.cancel_scope() if cancel_scope is None else cancel_scope
    if on_wait is not None:
        on_wait(scope)
    with scope if before is EARLY else LateScope(scope, before):
        late: LateAnswer | None = None
        if answer_late is not None and is_request:
            late = functools.partial(_answer_shutting_down, answer_late, request_id)  # built if used
        running.in_flight[scope] = late
        try:
            return await (handling if before is EARLY else resumed(handling, waiting_on))
        except Exception:
            return runner_failure(message)
        finally:
            running.in_flight.pop(scope, None)
    if running.stopping and is_request:
        return error_body(INTERNAL_ERROR, SHUTTING_DOWN, request_id)
    return None


async def _answer_shutting_down(
    answer_late: Callable[[dict[str, Any]], Awaitable[None]], request_id: Any
) -> None:
    await answer_late(error_body(INTERNAL_ERROR, SHUTTING_DOWN, request_id))


def error_body(code: int, message: str, id_: Any = None) -> dict[str, Any]:
    """An error response for an HTTP-level refusal (the JSON-RPC vocabulary builds it)."""
    return error_response(id_, MCPError(code, message))


async def watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """Cancel `scope` once the client closes the connection (reading nothing else meanwhile)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def json_reply(
    scope: Scope,
    receive: Receive,
    send: Send,
    message: Mapping[str, Any] | None,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Answer with one JSON object (or no body), `Content-Type: application/json`.

    `headers` are extra response headers (neither length nor type). The messages are the
    ones a Starlette `Response` sends (its header order too), built without one.
    """
    content = encode_message(message) if message is not None else b""
    raw_headers = (
        [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        if headers
        else []
    )
    raw_headers.append((b"content-length", str(len(content)).encode()))
    if message is not None:
        raw_headers.append(_JSON_CONTENT_TYPE)
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": content})


_BODY_KEY: Final = "mcpdi.body"
"""Where the endpoint that read a request's body leaves it in the request's scope for `receive_json`."""


def hand_over_body(scope: Scope, body: bytes) -> None:
    """Leave the request's body, already read, for `receive_json` (which then reads nothing)."""
    scope[_BODY_KEY] = body


async def receive_json(scope: Scope, receive: Receive, send: Send) -> object:
    """The request body parsed as strict JSON, or `NO_BODY` when there is no message to serve.

    That is when the client left before sending the whole body, or when the body is not
    JSON as the spec allows it (answered here: 400 with a `-32700` parse error). A body
    handed over (`hand_over_body`) is taken instead of reading one.
    """
    body: bytes | None = scope.pop(_BODY_KEY, None)
    if body is None:
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return NO_BODY
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    try:
        return parse_json(body)
    except MCPError as error:
        await json_reply(scope, receive, send, error_response(None, error), status=400)
        return NO_BODY
