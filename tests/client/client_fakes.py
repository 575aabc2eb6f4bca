"""A scripted server behind a fake channel, for client tests where the socket is not the subject."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpdi.lowlevel import METHOD_NOT_FOUND, MCPError
from mcpdi_transport import ChannelTarget, Client, Inbound

Handler = Callable[[dict[str, Any], dict[str, str]], Awaitable[dict[str, Any]]]
"""(params, lower-cased headers) -> result; raise MCPError for an error response."""

DISCOVERED: dict[str, Any] = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "instructions": "scripted",
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
}

INITIALIZED: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}


async def discovered(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return DISCOVERED


async def initialized(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return INITIALIZED


@dataclass
class Sent:
    message: dict[str, Any]
    headers: dict[str, str]

    @property
    def method(self) -> str:
        return self.message["method"]

    @property
    def params(self) -> dict[str, Any]:
        return self.message.get("params", {})


@dataclass
class ScriptedChannel:
    """Answers each request with `handlers[method]`; records everything the client sent."""

    handlers: dict[str, Handler]
    is_http: bool = True
    sent: list[Sent] = field(default_factory=lambda: list[Sent]())
    inbound: Inbound | None = None
    closed: bool = False

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        lowered = {name.lower(): value for name, value in headers.items()}
        self.sent.append(Sent(message, lowered))
        handler = self.handlers.get(message["method"])
        try:
            if handler is None:
                raise MCPError(METHOD_NOT_FOUND, "Method not found", message["method"])
            result = await handler(message.get("params", {}), lowered)
        except MCPError as exc:
            return {"jsonrpc": "2.0", "id": message["id"], "error": exc.to_error()}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        self.sent.append(Sent(message, {name.lower(): value for name, value in headers.items()}))

    async def aclose(self) -> None:
        self.closed = True

    def methods(self) -> list[str]:
        return [sent.method for sent in self.sent]


def scripted_client(channel: ScriptedChannel, **options: Any) -> Client:
    """A `Client` whose connection is `channel` (it is handed the client's inbound side)."""

    @asynccontextmanager
    async def open_channel(inbound: Inbound) -> AsyncGenerator[ScriptedChannel]:
        channel.inbound = inbound
        try:
            yield channel
        finally:
            await channel.aclose()

    return Client(ChannelTarget(open_channel), **options)


async def never(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")
