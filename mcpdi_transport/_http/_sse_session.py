"""One HTTP+SSE session: its event stream's queue, its calls, and the peer its messages are served with."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final

import anyio
import anyio.abc

from mcpdi.lowlevel import Connection, notification_message
from mcpdi_transport._outbound import OutboundRequests, Waiting

__all__ = ("SsePeer", "SseSession", "sse_event")

_QUEUE: Final = 64
"""Messages waiting to go out on one stream before their senders wait."""


class SseSession:
    """One client's event stream: what goes out on it, and the calls it has running."""

    def __init__(
        self,
        principal: str | None,
        peer: str,
        group: anyio.abc.TaskGroup,
        *,
        client_request_timeout: float,
        waiting: Waiting | None = None,
    ) -> None:
        self.principal = principal
        self.peer = peer
        self.group = group
        self.connection = Connection.for_legacy_session()
        self.connection.standalone = self._notify_standalone
        self.outbound = OutboundRequests(timeout=client_request_timeout, budget=waiting)
        self.sender, self.receiver = anyio.create_memory_object_stream[Mapping[str, Any]](_QUEUE)
        self.calls: dict[str, anyio.CancelScope] = {}

    async def write(self, message: Mapping[str, Any]) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.sender.send(message)

    async def _notify_standalone(self, method: str, params: Mapping[str, Any] | None) -> None:
        await self.write(notification_message(method, params))

    def finish(self) -> None:
        """End the stream once what is queued on it has gone out (a shutdown's last answers)."""
        self.outbound.fail_all()
        self.sender.close()

    def close(self) -> None:
        self.finish()
        self.receiver.close()


class SsePeer:
    """The peer of one message: notifications and requests go out on the session's stream."""

    __slots__ = ("_headers", "_session")

    def __init__(self, session: SseSession, headers: Mapping[str, str]) -> None:
        self._session = session
        self._headers = headers

    @property
    def headers(self) -> Mapping[str, str] | None:
        return self._headers

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        await self._session.write(notification_message(method, params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        return await self._session.outbound.send(
            method, params, self._session.write, gone="the event stream closed"
        )


def sse_event(name: str, data: str) -> bytes:
    return f"event: {name}\r\ndata: {data}\r\n\r\n".encode()
