"""A handshake-era `resources/subscribe` subscriber that stops reading delays no other, and what
waits for it is bounded: past the cap the oldest waiting update is dropped, with a warning."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest

import mcpdi
from mcpdi import _subscribing
from mcpdi.lowlevel._connection import Connection

pytestmark = pytest.mark.anyio


class Channel:
    """A connection's channel outside any request: records each update; `gate`, when given,
    holds every send until it is set (a client that stopped reading)."""

    def __init__(self, wanted: int, gate: anyio.Event | None = None) -> None:
        self.uris: list[str] = []
        self.gate = gate
        self.wanted = wanted
        self.sent_all = anyio.Event()

    async def __call__(self, method: str, params: Mapping[str, Any] | None) -> None:
        if self.gate is not None:
            await self.gate.wait()
        assert method == "notifications/resources/updated"
        assert params is not None
        self.uris.append(params["uri"])
        if len(self.uris) == self.wanted:
            self.sent_all.set()


async def subscribed(mcp: mcpdi.MCPServer, channel: Channel, uri: str) -> Connection:
    connection = Connection()
    connection.standalone = channel
    ctx: Any = SimpleNamespace(connection=connection)
    await mcp.subscriptions.subscribe(ctx, types.SubscribeRequestParams(uri=uri))
    return connection


async def test_a_subscriber_that_stopped_reading_keeps_only_the_newest_updates_and_delays_none(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_subscribing, "MAX_WAITING_UPDATES", 3)
    bus = mcpdi.InMemorySubscriptionBus()
    mcp = mcpdi.MCPServer("backlog", subscriptions=bus)

    @mcp.resource("notes://{day}")
    def note(day: str) -> str:
        return day

    gate = anyio.Event()
    fast, slow = Channel(wanted=8), Channel(wanted=4, gate=gate)
    async with mcp.running():
        kept = [await subscribed(mcp, fast, "notes://mon"), await subscribed(mcp, slow, "notes://mon")]
        for _ in range(8):
            await mcp.subscriptions.announce_updated("notes://mon")
        with anyio.fail_after(10):
            await fast.sent_all.wait()  # while the slow one holds its first
        assert slow.uris == []
        gate.set()
        with anyio.fail_after(10):
            await slow.sent_all.wait()  # its first, then the 3 newest: 4 were dropped
        assert len(kept) == 2
    assert len(fast.uris) == 8
    assert len(slow.uris) == 4
    dropped = [r for r in caplog.records if r.levelno == logging.WARNING and "oldest" in r.getMessage()]
    assert len(dropped) == 4
    assert len(bus) == 0  # the server stopped: its listener is gone
