"""What both HTTP eras share: Accept matching, header views, JSON replies, and the state of a running app."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpdi._errors import INTERNAL_ERROR
from mcpdi_transport._sse import dump_json

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = (
    "JSON",
    "AppOptions",
    "Running",
    "accepts",
    "error_body",
    "handle_safely",
    "header_lists",
    "header_pairs",
    "json_reply",
    "peer_headers",
)

JSON: Final = "application/json"

logger = logging.getLogger("mcpdi_transport")


@dataclass(frozen=True, slots=True)
class AppOptions:
    """How `build_http_app` was asked to serve (decided once, read per request)."""

    json_response: bool
    stateless: bool
    sse_retry_ms: int
    max_sessions: int
    session_idle_timeout: float


@dataclass(slots=True)
class Running:
    """What the app's lifespan provides to requests: the server's runner and a task group."""

    runner: Any
    task_group: TaskGroup


def accepts(scope: Scope) -> tuple[bool, bool]:
    """Whether the `Accept` header covers (JSON, SSE); wildcards count, parameters do not."""
    media: set[str] = set()
    for name, value in scope["headers"]:
        if name == b"accept":
            media.update(part.split(";")[0].strip().lower() for part in value.decode("latin-1").split(","))
    everything = "*/*" in media
    return (
        everything or JSON in media or "application/*" in media,
        everything or "text/event-stream" in media or "text/*" in media,
    )


def header_pairs(scope: Scope) -> list[tuple[str, str]]:
    """The request's headers as (lower-cased name, value) pairs, repeats kept."""
    return [(name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in scope["headers"]]


def header_lists(scope: Scope) -> dict[str, str | Sequence[str]]:
    """Lower-cased names to a value, or to the list of values of a repeated header."""
    grouped: dict[str, list[str]] = {}
    for name, value in header_pairs(scope):
        grouped.setdefault(name, []).append(value)
    return {name: values[0] if len(values) == 1 else values for name, values in grouped.items()}


def peer_headers(scope: Scope) -> Mapping[str, str]:
    """Lower-cased names to values; a repeated header's values joined by `, ` as HTTP allows."""
    grouped: dict[str, list[str]] = {}
    for name, value in header_pairs(scope):
        grouped.setdefault(name, []).append(value)
    return {name: ", ".join(values) for name, values in grouped.items()}


async def handle_safely(running: Running, message: Mapping[str, Any], connection: Any, peer: Any) -> Any:
    """`runner.handle`, with a failure of the runner itself answered as `-32603` instead of a 500."""
    try:
        return await running.runner.handle(message, connection, peer)
    except Exception:
        logger.exception("the runner failed on %s", message.get("method"))
        if "id" not in message or "method" not in message:
            return None
        return error_body(INTERNAL_ERROR, "Internal error", message["id"])


def error_body(code: int, message: str, id_: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


async def json_reply(
    scope: Scope,
    receive: Receive,
    send: Send,
    message: Mapping[str, Any] | None,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Answer with one JSON object (or no body), `Content-Type: application/json`."""
    content = dump_json(message).encode() if message is not None else b""
    response = Response(content, status_code=status, headers=dict(headers or {}))
    if message is not None:
        response.headers["content-type"] = JSON
    await response(scope, receive, send)
