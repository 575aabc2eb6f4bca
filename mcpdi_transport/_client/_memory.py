"""The client's in-memory channel: drive a server's sans-IO `Runner` with no process or socket."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, Protocol

from mcpdi.lowlevel import Connection, error_from_object
from mcpdi_transport._client._channel import ConnectionLost, Inbound

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

    def __init__(self, inbound: Inbound, headers: Mapping[str, str] | None) -> None:
        self._inbound = inbound
        self.headers = headers
        self._ids = itertools.count(1)

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        await self._inbound.on_notification(method, _copy(params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        result = await self._inbound.on_request(next(self._ids), method, _copy(params))
        return _copy(result) or {}


class MemoryChannel:
    """Every message is copied through JSON, so what the server sees is what a wire would carry.

    One `Connection` serves the whole client, as one stdio process would. With
    `raise_exceptions`, a handler that crashes fails its request with `MCPError(-32603,
    str(exception))` raised from the exception itself, as the official SDK's in-memory client does.
    """

    is_http = False

    def __init__(
        self,
        runner: _Runner,
        inbound: Inbound,
        headers: Mapping[str, str] | None = None,
        *,
        raise_exceptions: bool = False,
    ) -> None:
        self._runner = runner
        self._connection = Connection.for_stream()
        self._peer = _ClientPeer(inbound, headers)
        self._connection.standalone = self._peer.notify
        if raise_exceptions:
            self._connection.handler_failures = {}

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        response = await self._runner.handle(_copy(message) or {}, self._connection, self._peer)
        if response is None:
            msg = f"The server gave no response to {message['method']!r}"
            raise ConnectionLost(msg)
        failures = self._connection.handler_failures
        if failures and (failure := failures.pop(message["id"], None)) is not None:
            raise error_from_object(response.get("error")) from failure
        return _copy(response) or {}

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        await self._runner.handle(_copy(message) or {}, self._connection, self._peer)

    async def aclose(self) -> None:
        return None


_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def _through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _copy_json(value: Any) -> Any:
    """What `json.loads(json.dumps(value))` returns, walking plain JSON data without encoding it.

    Anything but str-keyed dicts, lists, tuples and exact JSON scalars goes through JSON itself,
    which converts it (or refuses it) exactly as a wire would.
    """
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _JSON_SCALARS:
        return value
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return _through_json(value)
            copied[key] = item if type(item) in _JSON_SCALARS else _copy_json(item)
        return copied
    if kind is list or kind is tuple:
        return [item if type(item) in _JSON_SCALARS else _copy_json(item) for item in value]
    return _through_json(value)


def _copy(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    copied: dict[str, Any] = _copy_json(value)
    return copied


@asynccontextmanager
async def open_memory_channel(
    server: RunnableServer,
    inbound: Inbound,
    headers: Mapping[str, str] | None = None,
    *,
    raise_exceptions: bool = False,
) -> AsyncGenerator[MemoryChannel]:
    """Enter the server's lifespan and yield a channel to its runner; the server reads `headers`
    (the client's own, lower-cased, as an HTTP server would) in `ctx.headers`."""
    lowered = {name.lower(): value for name, value in headers.items()} if headers else None
    async with server.running() as runner:
        yield MemoryChannel(runner, inbound, lowered, raise_exceptions=raise_exceptions)
