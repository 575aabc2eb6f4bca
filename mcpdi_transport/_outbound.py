"""Server-to-client requests of one connection: numbered, matched to the client's responses, read."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

import anyio

from mcpdi.lowlevel import (
    INTERNAL_ERROR,
    MCPError,
    RequestId,
    error_from_object,
    notification_message,
    request_message,
)

__all__ = ("REQUEST_TIMEOUT", "OutboundRequests", "request_key")

REQUEST_TIMEOUT: Final = -32001
"""The code a server-to-client request ends with when the client does not answer in time."""


def request_key(id_: object) -> str:
    """A dictionary key telling `1` and `"1"` apart."""
    return json.dumps(id_)


class _Answer:
    """Where the client's response to one server-to-client request lands."""

    __slots__ = ("arrived", "message")

    def __init__(self) -> None:
        self.arrived = anyio.Event()
        self.message: Mapping[str, Any] | None = None


class OutboundRequests:
    """The requests a connection has sent to the client and still waits on, by id."""

    __slots__ = ("_count", "_id_prefix", "_waiting", "timeout")

    def __init__(self, *, timeout: float = math.inf, id_prefix: str | None = None) -> None:
        self._count = 0
        self._id_prefix = id_prefix
        """With a prefix, ids are `"<prefix><n>"` strings: unique among several processes of one session."""
        self._waiting: dict[str, _Answer] = {}
        self.timeout = timeout
        """Seconds one request waits for its answer before it fails."""

    def deliver(self, message: Mapping[str, Any]) -> bool:
        """Route the client's response to the request waiting for it; False when none waits here."""
        answer = self._waiting.get(request_key(message.get("id")))
        if answer is None or answer.arrived.is_set():
            return False
        answer.message = message
        answer.arrived.set()
        return True

    def fail_all(self) -> None:
        """No response can come any more: every request still waiting fails."""
        for answer in self._waiting.values():
            answer.arrived.set()

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        write: Callable[[dict[str, Any]], Awaitable[None]],
        *,
        gone: str,
    ) -> dict[str, Any]:
        """Number a request, `write` it, and return the `result` of the client's response.

        Raises `MCPError`: with the client's error; `"{gone} before the client answered"`
        when `fail_all` ends the wait; `REQUEST_TIMEOUT` when no answer comes within
        `timeout` seconds (the client is then told to stop working on it).
        """
        self._count += 1
        request_id: RequestId = self._count if self._id_prefix is None else f"{self._id_prefix}{self._count}"
        key = request_key(request_id)
        answer = _Answer()
        self._waiting[key] = answer
        try:
            await write(request_message(request_id, method, params))
            with anyio.move_on_after(self.timeout) as waiting:
                await answer.arrived.wait()
        finally:
            del self._waiting[key]
        if waiting.cancelled_caught:
            cancelled = {"requestId": request_id, "reason": "timed out"}
            with anyio.move_on_after(1):
                await write(notification_message("notifications/cancelled", cancelled))
            msg = f"The client did not answer {method!r} within {self.timeout:g} s"
            raise MCPError(REQUEST_TIMEOUT, msg)
        reply = answer.message
        if reply is None:
            raise MCPError(INTERNAL_ERROR, f"{gone} before the client answered {method!r}")
        if "error" in reply:
            raise error_from_object(reply["error"])
        result = reply.get("result")
        return dict(cast("Mapping[str, Any]", result)) if isinstance(result, Mapping) else {}
