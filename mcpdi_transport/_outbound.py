"""Server-to-client requests of one connection: numbered, matched to the client's responses, read."""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import Awaitable, Callable, Generator, Mapping
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

__all__ = (
    "DEFAULT_MAX_PENDING_CLIENT_REQUESTS",
    "REQUEST_TIMEOUT",
    "OutboundRequests",
    "Waiting",
    "request_key",
)

logger = logging.getLogger("mcpdi_transport")

REQUEST_TIMEOUT: Final = -32001
"""The code a server-to-client request ends with when the client does not answer in time."""

DEFAULT_MAX_PENDING_CLIENT_REQUESTS: Final = 10_000
"""Server-to-client requests all sessions of a process may have waiting for an answer at once."""


_Write = Callable[[dict[str, Any]], Awaitable[None]]


def request_key(id_: object) -> str:
    """A dictionary key telling `1` and `"1"` apart: the id's JSON text."""
    if type(id_) is int:  # the usual id, spelled as `json.dumps` spells it, without its cost
        return str(id_)
    return json.dumps(id_)


class _Answer:
    """Where the client's response to one server-to-client request lands."""

    __slots__ = ("arrived", "message")

    def __init__(self) -> None:
        self.arrived = anyio.Event()
        self.message: Mapping[str, Any] | None = None


class Waiting:
    """How many server-to-client requests all connections of a process wait on together.

    Each waiting request holds its call (its task, its arguments, its stream) until the
    client answers or `client_request_timeout` passes: past `limit`, a new request fails its
    call at once instead, so clients that never answer cannot fill the server's memory.
    """

    __slots__ = ("count", "limit", "overflowing")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            msg = f"max_pending_client_requests must be at least 1, not {limit}"
            raise ValueError(msg)
        self.limit = limit
        self.count = 0
        self.overflowing = False
        """A warning was logged for the current overflow; again only once the count fell to half."""

    @contextlib.contextmanager
    def held(self, method: str) -> Generator[None]:
        """Count one more waiting request in the block; `MCPError` (-32603) when `limit` already wait."""
        if self.count >= self.limit:
            if not self.overflowing:
                self.overflowing = True
                logger.warning(
                    "server-to-client requests waiting for an answer reach max_pending_client_requests=%d: "
                    "new ones fail their calls",
                    self.limit,
                )
            msg = (
                f"The server cannot ask the client {method!r} now: {self.limit} requests to clients already "
                f"wait for an answer (max_pending_client_requests); try the call again later"
            )
            raise MCPError(INTERNAL_ERROR, msg)
        self.count += 1
        try:
            yield
        finally:
            self.count -= 1
            if self.overflowing and self.count <= self.limit // 2:
                self.overflowing = False


class OutboundRequests:
    """The requests a connection has sent to the client and still waits on, by id."""

    __slots__ = ("_count", "_id_prefix", "_waiting", "budget", "timeout")

    def __init__(
        self, *, timeout: float = math.inf, id_prefix: str | None = None, budget: Waiting | None = None
    ) -> None:
        self._count = 0
        self._id_prefix = id_prefix
        """With a prefix, ids are `"<prefix><n>"` strings: unique among several processes of one session."""
        self._waiting: dict[str, _Answer] = {}
        self.timeout = timeout
        """Seconds one request waits for its answer before it fails."""
        self.budget = budget
        """The process's count of waiting requests this connection's count towards, if any."""

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
        write: _Write,
        *,
        gone: str,
    ) -> dict[str, Any]:
        """Number a request, `write` it, and return the `result` of the client's response.

        Raises `MCPError`: with the client's error; `"{gone} before the client answered"`
        when `fail_all` ends the wait; `REQUEST_TIMEOUT` when no answer comes within
        `timeout` seconds (the client is then told to stop working on it); `-32603` before
        anything is written when the `budget` of waiting requests is spent.
        """
        with contextlib.nullcontext() if self.budget is None else self.budget.held(method):
            return await self._numbered(method, params, write, gone)

    async def _numbered(
        self, method: str, params: Mapping[str, Any] | None, write: _Write, gone: str
    ) -> dict[str, Any]:
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
