"""Subscribing passes through the server's middleware like every other request."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpdi import MCPError, MCPServer
from mcpdi_transport import Client

pytestmark = pytest.mark.anyio


def recording_server() -> tuple[MCPServer, list[str]]:
    seen: list[str] = []

    async def record(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.method)
        return await call_next(ctx)

    server = MCPServer("watched", middleware=[record])

    @server.resource("memo://today")
    def today() -> str:
        return "sunny"

    return server, seen


async def test_handshake_era_subscribe_and_unsubscribe_pass_through_middleware() -> None:
    server, seen = recording_server()
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            await client.subscribe_resource("memo://today")
            await client.unsubscribe_resource("memo://today")
    assert [m for m in seen if "subscribe" in m] == ["resources/subscribe", "resources/unsubscribe"]


async def test_a_listen_stream_passes_through_middleware() -> None:
    server, seen = recording_server()
    with anyio.fail_after(10):
        async with (
            Client(server, mode="2026-07-28") as client,
            client.listen(resource_subscriptions=["memo://today"]) as subscription,
        ):
            assert subscription.honored is not None
    assert "subscriptions/listen" in seen


async def test_a_middleware_that_refuses_subscribers_refuses_them_in_both_eras() -> None:
    async def members_only(ctx: Any, call_next: Any) -> Any:
        if ctx.method in ("resources/subscribe", "subscriptions/listen"):
            raise MCPError(-32001, f"{ctx.method} is for members only")
        return await call_next(ctx)

    server = MCPServer("guarded", middleware=[members_only])

    @server.resource("memo://today")
    def today() -> str:
        return "sunny"

    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            with pytest.raises(MCPError, match=r"^resources/subscribe is for members only$"):
                await client.subscribe_resource("memo://today")
            assert (await client.read_resource("memo://today")).contents[0].text == "sunny"  # pyright: ignore[reportAttributeAccessIssue]
        async with Client(server, mode="2026-07-28") as client:
            with pytest.raises(MCPError, match=r"^subscriptions/listen is for members only$"):
                async with client.listen(resource_subscriptions=["memo://today"]):
                    pass
