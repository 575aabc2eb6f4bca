"""The client's in-memory channel: drive a server's sans-IO `Runner` with no process or socket."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from mcpdi._connection import Connection

from ._client_channel import ConnectionLost, Inbound

__all__ = ("MemoryChannel", "RunnableServer", "open_memory_channel")


class _Runner(Protocol):
    async def handle(
        self, message: Mapping[str, Any], connection: Connection, peer: Any
    ) -> dict[str, Any] | None: ...


class RunnableServer(Protocol):
    """An `MCPServer` or low-level `Server`: anything with `running()` yielding a `Runner`."""

    def running(self) -> AbstractAsyncContextManager[Any]: ...


class _ClientPeer:
    """The server's view of this client: its questions go to the client's callbacks."""

    headers: Mapping[str, str] | None = None

    def __init__(self, inbound: Inbound) -> None:
        self._inbound = inbound
        self._ids = itertools.count(1)

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        await self._inbound.on_notification(method, _copy(params))

    async def request(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        result = await self._inbound.on_request(next(self._ids), method, _copy(params))
        return _copy(result) or {}


class MemoryChannel:
    """Every message is copied through JSON, so what the server sees is what a wire would carry.

    One `Connection` serves the whole client, as one stdio process would.
    """

    is_http = False

    def __init__(self, runner: _Runner, inbound: Inbound) -> None:
        self._runner = runner
        self._connection = Connection.for_stream()
        self._peer = _ClientPeer(inbound)

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        response = await self._runner.handle(_copy(message) or {}, self._connection, self._peer)
        if response is None:
            msg = f"The server gave no response to {message['method']!r}"
            raise ConnectionLost(msg)
        return _copy(response) or {}

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        await self._runner.handle(_copy(message) or {}, self._connection, self._peer)

    async def aclose(self) -> None:
        return None


def _copy(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


@asynccontextmanager
async def open_memory_channel(server: RunnableServer, inbound: Inbound) -> AsyncGenerator[MemoryChannel]:
    """Enter the server's lifespan and yield a channel to its runner."""
    async with server.running() as runner:
        yield MemoryChannel(runner, inbound)
