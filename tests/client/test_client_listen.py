"""`client.listen(...)` and `subscribe_resource` on mcpdi's client, spelled as the SDK's client
spells them, on every channel and against the official SDK's server too."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from client_files import INTEROP, SERVERS, load_file

from mcpdi import PromptsListChanged, ResourceUpdated, ToolsListChanged
from mcpdi_transport import Client, ListenNotSupportedError, StdioTarget

pytestmark = pytest.mark.anyio

SERVER_FILE = SERVERS / "notes_server.py"
SDK_SERVER_FILE = SERVERS.parent.parent / "port" / "servers" / "subscriptions.py"  # the same, for the SDK
MODERN = "2026-07-28"


@asynccontextmanager
async def target(channel: str) -> AsyncIterator[Any]:
    if channel == "memory":
        yield load_file(SERVER_FILE).server
    elif channel == "stdio":
        yield StdioTarget(sys.executable, (str(SERVER_FILE),))
    else:
        server = load_file(SERVER_FILE).server if channel == "http" else load_file(SDK_SERVER_FILE).mcp
        app = server.streamable_http_app()
        async with load_file(INTEROP).serve_app(app) as url:
            yield url


CHANNELS = ("memory", "stdio", "http", "sdk server over http")


@pytest.mark.parametrize("channel", CHANNELS)
async def test_listen_yields_the_events_asked_for_in_order(channel: str) -> None:
    async with target(channel) as where, Client(where, mode=MODERN) as client:
        async with client.listen(tools_list_changed=True, resource_subscriptions=["notes://today"]) as sub:
            assert sub.honored == types.SubscriptionFilter(
                tools_list_changed=True, resource_subscriptions=["notes://today"]
            )
            assert sub.subscription_id.startswith("listen-")
            await client.call_tool("write_note", {"text": "milk"})
            await client.call_tool("retool", {})  # also prompts: not asked for
            with anyio.fail_after(10):
                events = [await anext(sub), await anext(sub)]
        assert events == [ResourceUpdated("notes://today"), ToolsListChanged()]
        # The connection is still good after the stream ended.
        assert (await client.call_tool("write_note", {"text": "tea"})).structured_content == {
            "result": "saved"
        }


async def test_events_not_yet_read_are_kept_once_each() -> None:
    async with Client(load_file(SERVER_FILE).server, mode=MODERN) as client:
        async with client.listen(prompts_list_changed=True, resource_subscriptions=["notes://today"]) as sub:
            for text in ("a", "b", "c"):
                await client.call_tool("write_note", {"text": text})
            await client.call_tool("retool", {})
            with anyio.fail_after(10):
                first, second = await anext(sub), await anext(sub)
        assert [first, second] == [ResourceUpdated("notes://today"), PromptsListChanged()]


async def test_a_graceful_end_by_the_server_ends_the_loop() -> None:
    server = load_file(SERVER_FILE).server
    async with Client(server, mode=MODERN) as client, client.listen(tools_list_changed=True) as sub:
        await client.call_tool("retool", {})
        listen = server.subscriptions.listen
        assert listen is not None
        listen.close()
        with anyio.fail_after(10):
            assert [event async for event in sub] == [ToolsListChanged()]


async def test_listen_in_the_handshake_era_says_to_subscribe_instead() -> None:
    async with Client(load_file(SERVER_FILE).server, mode="legacy") as client:
        with pytest.raises(ListenNotSupportedError, match=r"use subscribe_resource\(\)"):
            async with client.listen(tools_list_changed=True):
                pass


async def test_a_bare_string_of_uris_is_refused() -> None:
    async with Client(load_file(SERVER_FILE).server, mode=MODERN) as client:
        with pytest.raises(TypeError, match="not a bare string"):
            async with client.listen(resource_subscriptions="notes://today"):
                pass


@pytest.mark.parametrize("channel", ["memory", "stdio", "http"])
async def test_subscribe_resource_brings_updates_to_the_message_handler(channel: str) -> None:
    heard: list[str] = []
    arrived = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(message.params.uri)
            arrived.set()

    async with target(channel) as where, Client(where, mode="legacy", message_handler=handler) as client:
        assert client.server_capabilities.resources == types.ResourcesCapability(
            subscribe=True, list_changed=False
        )
        await client.subscribe_resource("notes://today")
        await client.call_tool("write_note", {"text": "bread"})
        with anyio.fail_after(10):
            await arrived.wait()
        assert heard == ["notes://today"]
        await client.unsubscribe_resource("notes://today")
