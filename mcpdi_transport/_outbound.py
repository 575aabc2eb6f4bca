"""Server-to-client requests of one connection: numbered, matched to the client's responses, read."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import anyio

from mcpdi.lowlevel import INTERNAL_ERROR, MCPError, RequestId, request_message

__all__ = ("OutboundRequests", "request_key")


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

    __slots__ = ("_count", "_waiting")

    def __init__(self) -> None:
        self._count = 0
        self._waiting: dict[str, _Answer] = {}

    def deliver(self, message: Mapping[str, Any]) -> None:
        """Route the client's response to the request waiting for it; any other is dropped."""
        answer = self._waiting.get(request_key(message.get("id")))
        if answer is not None and not answer.arrived.is_set():
            answer.message = message
            answer.arrived.set()

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

        Raises `MCPError` with the client's error, or `"{gone} before the client answered"`
        when `fail_all` ends the wait.
        """
        self._count += 1
        request_id: RequestId = self._count
        key = request_key(request_id)
        answer = _Answer()
        self._waiting[key] = answer
        try:
            await write(request_message(request_id, method, params))
            await answer.arrived.wait()
        finally:
            del self._waiting[key]
        reply = answer.message
        if reply is None:
            raise MCPError(INTERNAL_ERROR, f"{gone} before the client answered {method!r}")
        error = reply.get("error")
        if isinstance(error, Mapping):
            error = cast("Mapping[str, Any]", error)
            code = error.get("code")
            raise MCPError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(error.get("message", "")),
                error.get("data"),
            )
        result = reply.get("result")
        return dict(cast("Mapping[str, Any]", result)) if isinstance(result, Mapping) else {}
