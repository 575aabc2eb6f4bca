"""JSON-RPC 2.0 framing: sort one parsed message into its kind, and build response objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from mcpdi.lowlevel._errors import INVALID_REQUEST, MCPError

__all__ = (
    "Invalid",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "classify_message",
    "error_response",
    "notification_message",
    "request_message",
    "result_response",
)

RequestId: TypeAlias = int | str


@dataclass(frozen=True, slots=True)
class Request:
    """A message that wants an answer."""

    id: RequestId
    method: str
    params: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    """A message that wants no answer."""

    method: str
    params: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class Response:
    """The client's answer to a request the server sent (a transport routes it, not the core)."""

    id: RequestId | None
    message: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A message that is not valid JSON-RPC; answered with `error` under `id` (null when unknown)."""

    id: RequestId | None
    error: MCPError


def _is_request_id(value: object) -> bool:
    # bool is an int subclass; JSON `true` is no request id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid(id_: RequestId | None, problem: str) -> Invalid:
    return Invalid(id_, MCPError(INVALID_REQUEST, f"Invalid request: {problem}"))


def classify_message(message: object) -> Request | Notification | Response | Invalid:
    """Sort one parsed JSON value into request, notification, client response or invalid."""
    # `type(...) is dict` first: parsed JSON is a dict, and the ABC check costs 5× as much.
    if type(message) is not dict and not isinstance(message, Mapping):
        return _invalid(None, "a JSON-RPC message must be a JSON object")
    body = cast("Mapping[str, Any]", message)
    raw_id = body.get("id")
    id_: RequestId | None = cast("RequestId", raw_id) if _is_request_id(raw_id) else None
    if body.get("jsonrpc") != "2.0":
        return _invalid(id_, "'jsonrpc' must be \"2.0\"")
    if "method" not in body:
        if "id" in body and ("result" in body or "error" in body):
            return Response(id_, body)
        return _invalid(id_, "the message has no 'method' and is not a response")
    method = body["method"]
    if not isinstance(method, str):
        return _invalid(id_, "'method' must be a string")
    params = body.get("params")
    if params is not None and type(params) is not dict and not isinstance(params, Mapping):
        return _invalid(id_, "'params' must be an object")
    typed_params = cast("Mapping[str, Any] | None", params)
    if "id" not in body:
        return Notification(method, typed_params)
    if id_ is None:
        return _invalid(None, "'id' must be a string or an integer")
    return Request(id_, method, typed_params)


def request_message(id_: RequestId, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A request object (without `params` when there are none)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def notification_message(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A notification object (without `params` when there are none)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def result_response(id_: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    """A success response object."""
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def error_response(id_: RequestId | None, error: MCPError) -> dict[str, Any]:
    """An error response object (`id` null when the request's id could not be read)."""
    return {"jsonrpc": "2.0", "id": id_, "error": error.to_error()}
