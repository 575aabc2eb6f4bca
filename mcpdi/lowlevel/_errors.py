"""JSON-RPC errors a request can end with: `MCPError`, the protocol's codes and their HTTP statuses."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from mcp_types import ErrorData, JSONRPCError

__all__ = (
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CAPABILITY",
    "PARSE_ERROR",
    "UNSUPPORTED_VERSION",
    "MCPError",
    "NoBackChannel",
    "http_status_for",
)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022


class MCPError(Exception):
    """An error the peer is told about as a JSON-RPC `error` object.

    Raise it from a handler to answer the request with exactly this code, message and
    data. Everything else a handler raises is answered as `-32603 Internal server error`
    and logged, so internal details never reach the client.
    """

    code: int
    message: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @property
    def error(self) -> ErrorData:
        """The error as the wire type (`err.error.code`, as the official SDK spells it)."""
        return ErrorData(code=self.code, message=self.message, data=self.data)

    @classmethod
    def from_error_data(cls, error: ErrorData) -> MCPError:
        """The error a peer answered with, as `MCPError` (`from_jsonrpc_error` for a whole response)."""
        return cls(error.code, error.message, error.data)

    @classmethod
    def from_jsonrpc_error(cls, error: JSONRPCError) -> MCPError:
        return cls.from_error_data(error.error)

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` member (`data` only when there is some)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"


class NoBackChannel(MCPError):
    """A server-to-client request was attempted where nothing can carry it.

    Raised by `ServerRequestContext.send_request` at protocol 2026-07-28 (which has no
    server-to-client requests: return an `InputRequiredResult` instead) and by transports
    whose legacy mode has no stream back to the client (plain JSON responses).
    """

    method: str

    def __init__(self, method: str, reason: str) -> None:
        msg = f"Cannot send {method!r} to the client: {reason}"
        super().__init__(INVALID_REQUEST, msg)
        self.method = method


_HTTP_STATUS: Final[Mapping[int, int]] = MappingProxyType(
    {
        PARSE_ERROR: 400,
        INVALID_REQUEST: 400,
        INVALID_PARAMS: 400,
        HEADER_MISMATCH: 400,
        MISSING_CAPABILITY: 400,
        UNSUPPORTED_VERSION: 400,
        METHOD_NOT_FOUND: 404,
    }
)


def http_status_for(code: int) -> int:
    """The HTTP status of a modern-era JSON-RPC error answered as plain JSON.

    Client mistakes are 4xx (protocol.md §2.7); a server fault (`-32603`) and any
    application code stay 200, since the spec gives them no status.
    """
    return _HTTP_STATUS.get(code, 200)
