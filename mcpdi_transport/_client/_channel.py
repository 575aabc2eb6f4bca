"""What the client needs from a transport: send a request, get its response; hear the server."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, cast

from mcpdi.lowlevel import MCPError, error_from_object, error_response

__all__ = (
    "Channel",
    "ChannelTarget",
    "ConnectionLost",
    "Inbound",
    "SessionExpired",
    "as_object",
    "error_response",
    "raise_for_error",
    "sole_exception",
)


class Inbound(Protocol):
    """The client side that a channel hands the server's own messages to."""

    async def on_request(
        self, request_id: str | int, method: str, params: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """Answer a server-to-client request; raise `MCPError` to answer with an error."""
        ...

    async def on_notification(self, method: str, params: Mapping[str, Any] | None) -> None:
        """Take one server notification."""
        ...


class Channel(Protocol):
    """One connection to one server, speaking parsed JSON-RPC messages.

    `headers` are HTTP request headers; channels that are not HTTP ignore them.
    """

    is_http: bool

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        """Send one request and return its response message (with `result` or `error`).

        Raises `ConnectionLost` when the response can never arrive, and `MCPError` when
        the server refused the request outside JSON-RPC (an HTTP error without a body).
        """
        ...

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        """Send one notification."""
        ...

    async def aclose(self) -> None:
        """End the connection (DELETE the HTTP session, close the child's stdin, ...)."""
        ...


@dataclass(frozen=True, slots=True)
class ChannelTarget:
    """A `Client` target that brings its own connection (a test double, a custom transport).

    `open(inbound)` returns an async context manager yielding a `Channel`; the channel hands
    the server's own requests and notifications to `inbound`.
    """

    open: Callable[[Inbound], AbstractAsyncContextManager[Channel]]


class ConnectionLost(ConnectionError):
    """The connection ended before the server answered."""


class SessionExpired(MCPError):
    """The server no longer knows the handshake-era session (HTTP 404); a new `initialize` is due."""


def as_object(value: object) -> dict[str, Any] | None:
    """`value` if it is a JSON object, else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception a task group wrapped, so callers see what actually went wrong."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        current = pending.pop()
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        else:
            leaves.append(current)
    return leaves[0] if len(leaves) == 1 else group


def raise_for_error(response: Mapping[str, Any]) -> dict[str, Any]:
    """The response's `result`, or its `error` raised as `MCPError`."""
    error = response.get("error")
    if error is not None:
        raise error_from_object(error)
    result = response.get("result")
    if not isinstance(result, dict):
        msg = f"The server answered with a result that is not an object: {result!r}"
        raise MCPError(-32603, msg)
    return result  # pyright: ignore[reportUnknownVariableType]
