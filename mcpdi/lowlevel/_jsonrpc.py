"""JSON-RPC 2.0 on the wire: strict JSON in, JSON that cannot fail out, messages sorted and built.

Every transport and the client read and write through these functions, so one set of rules
decides what a peer may send and what an answer looks like."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeGuard, cast

from pydantic_core import from_json, to_json

from mcpdi.engine._records import built_fast
from mcpdi.lowlevel._errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, MCPError

__all__ = (
    "NATIVE_INT_LIMIT",
    "Invalid",
    "NativeJSON",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "classify_message",
    "encode_message",
    "error_from_object",
    "error_response",
    "is_request_id",
    "notification_message",
    "parse_json",
    "request_message",
    "result_response",
)

RequestId: TypeAlias = int | str

logger = logging.getLogger("mcpdi")


@built_fast  # one per request
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


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """An int or a str: what JSON-RPC allows as an id (`true` is no id, though bool is an int)."""
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
    id_: RequestId | None = raw_id if is_request_id(raw_id) else None
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


# -- JSON text in and out -------------------------------------------------------------------

_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""Compact, UTF-8-safe JSON; `NaN` and `Infinity` are no JSON, so they are refused."""

_UNENCODABLE: Final = (ValueError, TypeError, RecursionError, OverflowError)
"""What encoding can raise: `UnicodeEncodeError` (a lone surrogate) and an int over Python's
digit limit are `ValueError`s, a value of no JSON type is a `TypeError`."""

_LAST_RESORT: Final = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}'


def _reject_constant(name: str) -> object:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def parse_json(raw: bytes | bytearray | str) -> object:
    """Parse one JSON text as RFC 8259 and I-JSON allow it, or raise `MCPError` (`-32700`).

    Refused: invalid UTF-8, lone surrogate escapes (`"\\ud800"`), the literals `NaN` and
    `Infinity`, trailing data, and nesting too deep to parse. The fast parser answers almost
    every body; what it refuses (a leading BOM, nesting deeper than 200) is read by `json`
    with the same rules, so both paths accept the same texts.
    """
    try:
        value = from_json(raw, allow_inf_nan=False)
    except ValueError as fast_error:
        reason = str(fast_error)
    else:
        _refuse_overflow(raw, value)
        return value
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")
        value = json.loads(text.removeprefix("\ufeff"), parse_constant=_reject_constant)
        # A lone surrogate parsed into a str cannot be encoded as UTF-8: that finds one anywhere.
        _ENCODER.encode(value).encode()
    except UnicodeEncodeError:
        reason = "a string holds a lone surrogate escape (\\ud800-\\udfff unpaired), which is no text"
        raise MCPError(PARSE_ERROR, "Parse error", reason) from None
    except (ValueError, RecursionError):
        raise MCPError(PARSE_ERROR, "Parse error", reason) from None
    _refuse_overflow(text, value)
    return value


_BIG_EXPONENT: Final = re.compile(r"[0-9][eE][+]?0*[0-9]{3}")
_MANY_DIGITS: Final = re.compile(r"[0-9]{300}")
"""What a number too large for a double needs: a three-digit exponent (after a digit, as JSON
writes one), or 300 digits or more. Two scans: one alternation costs twice both."""
_BIG_EXPONENT_BYTES: Final = re.compile(_BIG_EXPONENT.pattern.encode())
_DIGITS_AND_E: Final = bytes(
    ord("0") if ord("0") <= byte <= ord("9") else ord("e") if byte in b"eE" else ord(" ")
    for byte in range(256)
)
"""Bytes to what the scans look for: a digit to `0`, `e` and `E` to `e`, anything else to a space.
One translation (in C) then tells whether a digit is followed by an `e` at all (the exponent
scan costs ten times as much, and most bodies have none) and whether 300 digits run."""
_DIGIT_RUN: Final = b"0" * 300

_OVERFLOW: Final = "a number is too large for a double (like 1e999), which is no finite number"


def _refuse_overflow(raw: bytes | bytearray | str, value: object) -> None:
    """Refuse a text whose number overflowed to infinity, as the literal `Infinity` is refused.

    Only a text that could hold such a number (a scan of the raw text) is walked."""
    if _may_overflow(raw) and not _finite(value):
        raise MCPError(PARSE_ERROR, "Parse error", _OVERFLOW)


def _may_overflow(raw: bytes | bytearray | str) -> bool:
    """Whether `raw` holds a three-digit exponent after a digit, or a run of 300 digits."""
    if isinstance(raw, str):
        return _BIG_EXPONENT.search(raw) is not None or (
            len(raw) >= 300 and _MANY_DIGITS.search(raw) is not None
        )
    kinds = raw.translate(_DIGITS_AND_E)
    # Counting the digits first: a search for the 300-byte run prepares its needle on every
    # call, which costs more than counting a body's bytes, and most bodies hold few digits.
    return (b"0e" in kinds and _BIG_EXPONENT_BYTES.search(raw) is not None) or (
        len(raw) >= 300 and kinds.count(48) >= 300 and _DIGIT_RUN in kinds
    )


def _finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in cast("dict[str, object]", value).values())
    if isinstance(value, list):
        return all(_finite(item) for item in cast("list[object]", value))
    return True


NATIVE_INT_LIMIT: Final = 1 << 64
"""Ints a `NativeJSON` may hold lie strictly between minus this and this (far below the digit
limit on `int` to `str`, which `json` obeys and `to_json` does not)."""


class NativeJSON(dict[str, Any]):
    """A result object built of what `json` and pydantic's `to_json` write byte for byte alike.

    That is str keys; str, bool and None leaves, ints within `NATIVE_INT_LIMIT`; lists and
    plain dicts of the same, all of exact types; no float (the two spell some differently).
    The fast sieve builds its results so, and `encode_message` writes a response carrying one
    with `to_json`, several times faster than `json`. The promise is the builder's: a holder
    that changes the object must not hand it back to `encode_message`.
    """

    __slots__ = ()


def _native_response(message: Mapping[str, Any]) -> bool:
    """Whether `message` is a success response `to_json` writes as `json` does (`NativeJSON`)."""
    if type(message) is not dict:
        return False
    fields = cast("dict[str, Any]", message)
    if len(fields) != 3 or type(fields.get("result")) is not NativeJSON:
        return False
    id_ = fields.get("id")
    return type(fields.get("jsonrpc")) is str and (
        type(id_) is str or (type(id_) is int and -NATIVE_INT_LIMIT < id_ < NATIVE_INT_LIMIT)
    )


def encode_message(message: Mapping[str, Any]) -> bytes:
    """One JSON-RPC message as compact UTF-8 JSON (no newline).

    A response never fails to encode: when its content cannot be (a lone surrogate, an int
    over Python's 4300-digit limit, `NaN`, a non-JSON value), a `-32603` error answers its
    id instead. Other messages raise `MCPError` (`-32603`), which fails the request that
    sent them, not the connection.
    """
    if _native_response(message):
        try:
            return to_json(message)
        except ValueError:  # a lone surrogate: `json` below refuses it as well, and says so
            pass
    try:
        return _ENCODER.encode(message).encode()
    except _UNENCODABLE as error:
        problem = f"{type(error).__name__}: {error}"
    if "method" in message:
        msg = f"Cannot send {message.get('method')!r}: its content is not JSON ({problem})"
        raise MCPError(INTERNAL_ERROR, msg)
    logger.error("answering with -32603: the response could not be encoded as JSON (%s)", problem)
    id_ = message.get("id")
    fallback = error_response(
        id_ if is_request_id(id_) else None,
        MCPError(INTERNAL_ERROR, "Internal error: the response could not be encoded as JSON"),
    )
    try:
        return _ENCODER.encode(fallback).encode()
    except _UNENCODABLE:
        return _LAST_RESORT


def error_from_object(error: object) -> MCPError:
    """The `MCPError` a JSON-RPC `error` member stands for; a malformed one becomes `-32603`."""
    if not isinstance(error, Mapping):
        return MCPError(INTERNAL_ERROR, f"The peer answered with a malformed error: {error!r:.200}")
    fields = cast("Mapping[str, Any]", error)
    code, message = fields.get("code"), fields.get("message")
    return MCPError(
        code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
        message if isinstance(message, str) else repr(message),
        fields.get("data"),
    )
