"""The server's extension notifications, handed to their `NotificationBinding` handlers in order.

Each binding has a bounded queue and a task of its own, so a handler that awaits the client
(a follow-up request) never holds up the connection's reader, which would deadlock it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel, ValidationError

from mcpdi_transport._client._channel import sole_exception

__all__ = ("QUEUE_SIZE", "BoundNotifications")

logger = logging.getLogger("mcpdi_transport.client")

QUEUE_SIZE: Final = 64

_Queue = tuple[MemoryObjectSendStream[BaseModel], MemoryObjectReceiveStream[BaseModel]]


class BoundNotifications:
    """Routes the notifications an extension binds; `offer` is told every notification that arrives."""

    def __init__(self, bindings: Mapping[str, Any]) -> None:
        self._bindings = dict(bindings)
        self._queues: dict[str, _Queue] = {}

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Deliver while open; leaving stops the handlers (what is still queued is dropped)."""
        if not self._bindings:
            yield
            return
        try:
            async with anyio.create_task_group() as group:
                for method, binding in self._bindings.items():
                    send, receive = anyio.create_memory_object_stream[BaseModel](QUEUE_SIZE)
                    self._queues[method] = (send, receive)
                    group.start_soon(_deliver, binding, receive)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        except BaseExceptionGroup as failures:  # what the client's user raised, not a group of it
            raise sole_exception(failures) from None
        finally:
            for send, receive in self._queues.values():  # the handlers have stopped by now
                send.close()
                receive.close()
            self._queues.clear()

    def offer(self, method: str, params: Mapping[str, Any] | None, version: str | None) -> bool:
        """Queue `method` for its binding and say so; False for a core notification or an unbound one."""
        queues = self._queues.get(method)
        if queues is None or _is_core(method, version):
            return False
        binding = self._bindings[method]
        try:
            bound = binding.params_type.model_validate(dict(params or {}))
        except ValidationError:
            logger.warning("Failed to validate notification: %s", method, exc_info=True)
            return True
        send, receive = queues
        try:
            send.send_nowait(bound)
        except anyio.WouldBlock:
            receive.receive_nowait()
            logger.warning("notification queue for %r is full; dropped the oldest event", method)
            send.send_nowait(bound)
        return True


def _is_core(method: str, version: str | None) -> bool:
    """Whether the core protocol defines `method` at `version` (bindings never take those)."""
    from mcp_types.methods import SERVER_NOTIFICATIONS  # the method tables: only with a binding

    if version is not None:
        return (method, version) in SERVER_NOTIFICATIONS
    return any(known == method for known, _ in SERVER_NOTIFICATIONS)


async def _deliver(binding: Any, receive: MemoryObjectReceiveStream[BaseModel]) -> None:
    async for params in receive:
        try:
            await binding.handler(params)
        except Exception:  # one failing handler must not end the others' delivery
            logger.exception("notification binding for %r raised", binding.method)
