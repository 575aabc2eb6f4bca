"""Change notifications as SDK code announces them: `subscriptions/listen` at 2026-07-28, and
`resources/subscribe` in the handshake era, driven by the official client."""

from __future__ import annotations

import gc
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types
import pytest
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, ResourceUpdated, ToolsListChanged
from port_harness import FLAVOURS, connect, load, outcome, serve, transcripts, wire

import mcpdi
from mcpdi_transport import Client as McpdiClient

pytestmark = pytest.mark.anyio

# The official client marks subscribe_resource deprecated (it is gone at 2026-07-28); handshake-era
# servers still serve it, and SDK code that speaks to them still calls it.
handshake_subscribe = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")

MODERN = "2026-07-28"


async def listened(client: Client) -> dict[str, Any]:
    """Listen for tool changes and one resource; write a note, change the tools; what arrives."""
    async with client.listen(tools_list_changed=True, resource_subscriptions=["notes://today"]) as sub:
        written = await client.call_tool("write_note", {"text": "milk"})
        await client.call_tool("retool", {})
        events = []
        with anyio.fail_after(10):
            async for event in sub:
                events.append(event)
                if len(events) == 2:
                    break
        return {"honored": wire(sub.honored), "written": wire(written), "events": events}


async def test_a_listen_stream_carries_what_the_tools_announce_as_the_sdks_does() -> None:
    seen = await transcripts("subscriptions", MODERN, listened)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["honored"] == {"toolsListChanged": True, "resourceSubscriptions": ["notes://today"]}
    assert seen["mcpdi"]["events"] == [ResourceUpdated(uri="notes://today"), ToolsListChanged()]


async def filtered(client: Client) -> list[Any]:
    """A stream for another URI hears nothing of `notes://today`; only what it asked for."""
    async with client.listen(resource_subscriptions=["notes://day/mon"], tools_list_changed=True) as sub:
        await client.call_tool("write_note", {"text": "eggs"})  # notes://today: not asked for
        await client.call_tool("retool", {})
        with anyio.fail_after(10):
            return [await anext(aiter(sub))]


async def test_a_listen_stream_gets_only_the_kinds_and_uris_it_asked_for() -> None:
    seen = await transcripts("subscriptions", MODERN, filtered)
    assert seen["mcpdi"] == seen["sdk"] == [ToolsListChanged()]


async def capabilities(client: Client) -> Any:
    discovered = await client.session.discover()
    return wire(discovered.capabilities)


async def test_the_2026_capabilities_promise_listen_as_the_sdks_do() -> None:
    seen = await transcripts("subscriptions", "auto", capabilities)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["resources"] == {"subscribe": True, "listChanged": True}
    assert seen["mcpdi"]["tools"] == {"listChanged": True}


async def test_listen_in_the_handshake_era_is_refused_by_the_client_alike() -> None:
    for flavour in FLAVOURS:
        async with connect(flavour, load("subscriptions", flavour).mcp, "legacy") as client:
            with pytest.raises(ListenNotSupportedError):
                async with client.listen(tools_list_changed=True):
                    pass


async def test_a_client_that_leaves_its_listen_stream_leaves_nothing_behind() -> None:
    mcp = load("subscriptions", "mcpdi").mcp
    listen = mcp.subscriptions.listen
    async with serve(mcp.streamable_http_app()) as url, Client(url, mode=MODERN) as client:
        async with client.listen(resource_subscriptions=["notes://today"]):
            assert listen.open_streams == 1
            assert len(mcp.subscriptions.bus) == 2  # and the resources/subscribe subscribers' own
        with anyio.fail_after(10):
            while listen.open_streams:  # the server sees the stream close, then drops the listener
                await anyio.sleep(0.01)
        assert len(mcp.subscriptions.bus) == 1
    assert len(mcp.subscriptions.bus) == 0  # the server stopped: none is left


# -- the handshake era: resources/subscribe ---------------------------------------------------


class Heard:
    """The notifications one official client's `message_handler` took."""

    def __init__(self) -> None:
        self.notifications: list[Any] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            self.notifications.append(message.params.uri)
            self.arrived.set()

    async def next_uri(self) -> str:
        with anyio.fail_after(10):
            await self.arrived.wait()
        self.arrived = anyio.Event()
        return self.notifications.pop(0)


@handshake_subscribe
async def test_resources_subscribe_delivers_updates_to_the_subscribed_client_only() -> None:
    mcp = load("subscriptions", "mcpdi").mcp
    subscriber, other = Heard(), Heard()
    async with (
        serve(mcp.streamable_http_app()) as url,
        Client(url, mode="legacy", message_handler=subscriber) as first,
        Client(url, mode="legacy", message_handler=other) as second,
    ):
        assert first.server_capabilities.resources == mcp_types.ResourcesCapability(
            subscribe=True, list_changed=False
        )
        assert wire(await first.subscribe_resource("notes://today")) == {}
        assert wire(await second.subscribe_resource("notes://day/tue")) == {}
        await second.call_tool("write_note", {"text": "bread"})  # updates notes://today
        assert await subscriber.next_uri() == "notes://today"
        await first.read_resource("notes://day/tue")
        await mcp.subscriptions.announce_updated("notes://day/tue")
        assert await other.next_uri() == "notes://day/tue"  # the first it hears: not notes://today
        assert subscriber.notifications == other.notifications == []
        assert wire(await first.unsubscribe_resource("notes://today")) == {}
        await second.call_tool("write_note", {"text": "jam"})
        await mcp.subscriptions.announce_updated("notes://day/tue")
        assert await other.next_uri() == "notes://day/tue"
        assert subscriber.notifications == []


async def subscribe_errors(client: Client) -> dict[str, Any]:
    return {
        "unknown uri": await outcome(client.subscribe_resource("notes://nowhere")),
        "path trick": await outcome(client.subscribe_resource("notes://day/..%2f..%2fetc")),
        "not subscribed": await outcome(client.unsubscribe_resource("notes://today")),
    }


@handshake_subscribe
async def test_bad_subscriptions_get_clear_errors_where_the_sdk_has_no_method() -> None:
    seen = await transcripts("subscriptions", "legacy", subscribe_errors)
    # The SDK's MCPServer serves no resources/subscribe at all; mcpdi says what is wrong.
    not_found = {"error": -32601, "message": "Method not found"}
    assert seen["sdk"] == {case: not_found for case in seen["sdk"]}
    assert seen["mcpdi"] == {
        "unknown uri": {"error": -32602, "message": "Unknown resource: notes://nowhere"},
        "path trick": {"error": -32602, "message": "Unknown resource: notes://day/..%2f..%2fetc"},
        "not subscribed": {"error": -32602, "message": "Not subscribed to notes://today"},
    }


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def modern_post(method: str, params: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {**HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    return headers, {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}


MALFORMED = {
    "listen without a filter": ("subscriptions/listen", {}),
    "listen with a filter that is not an object": ("subscriptions/listen", {"notifications": "all"}),
    "listen with a URI that is not a string": (
        "subscriptions/listen",
        {"notifications": {"resourceSubscriptions": [5]}},
    ),
    "resources/subscribe at 2026-07-28": ("resources/subscribe", {"uri": "notes://today"}),
}


async def test_malformed_listen_requests_get_the_sdks_json_rpc_errors() -> None:
    seen: dict[str, dict[str, Any]] = {}
    for flavour in FLAVOURS:
        mcp = load("subscriptions", flavour).mcp
        seen[flavour] = {}
        async with serve(mcp.streamable_http_app()) as url, httpx.AsyncClient() as http:
            for case, (method, params) in MALFORMED.items():
                headers, body = modern_post(method, params)
                reply = await http.post(url, json=body, headers=headers)
                seen[flavour][case] = (reply.status_code, reply.json()["error"]["code"])
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"] == {
        "listen without a filter": (400, -32602),
        "listen with a filter that is not an object": (400, -32602),
        "listen with a URI that is not a string": (400, -32602),
        "resources/subscribe at 2026-07-28": (404, -32601),
    }


@pytest.mark.parametrize(
    ("params", "detail"),
    [({}, "uri: Field required"), ({"uri": 5}, "uri: Input should be a valid string")],
)
async def test_handshake_subscribe_params_that_name_no_uri_are_invalid_params(
    params: dict[str, Any], detail: str
) -> None:
    mcp = load("subscriptions", "mcpdi").mcp
    async with McpdiClient(mcp, mode="legacy") as client:
        for method in ("resources/subscribe", "resources/unsubscribe"):
            with pytest.raises(mcpdi.MCPError) as caught:
                await client.send_request(method, params)
            assert caught.value.code == -32602
            assert detail in caught.value.message


@handshake_subscribe
async def test_a_subscriber_whose_session_ended_is_dropped() -> None:
    mcp = load("subscriptions", "mcpdi").mcp
    async with serve(mcp.streamable_http_app()) as url:
        async with Client(url, mode="legacy") as client:
            await client.subscribe_resource("notes://day/wed")
            assert mcp.subscriptions.subscriber_count("notes://day/wed") == 1
        # The client's exit ends its session (DELETE); nothing keeps its connection alive.
        with anyio.fail_after(10):
            while mcp.subscriptions.subscriber_count("notes://day/wed"):
                gc.collect()
                await anyio.sleep(0.01)
        await mcp.subscriptions.announce_updated("notes://day/wed")  # reaches nobody, raises nothing


@handshake_subscribe
async def test_a_session_less_endpoint_refuses_subscribe_and_says_to_listen() -> None:
    mcp = load("subscriptions", "mcpdi").mcp
    async with (
        serve(mcp.streamable_http_app(stateless_http=True)) as url,
        Client(url, mode="legacy") as client,
    ):
        refused = await outcome(client.subscribe_resource("notes://today"))
    assert refused == {
        "error": -32602,
        "message": "Cannot subscribe to notes://today: this connection has no channel for notifications "
        "outside a request (a session-less HTTP endpoint); use subscriptions/listen at 2026-07-28",
    }


async def test_the_sdks_own_bus_plugs_into_an_mcpdi_server() -> None:
    from mcp.server.subscriptions import InMemorySubscriptionBus as SdkBus

    bus = SdkBus()
    mcp = mcpdi.MCPServer("bus", subscriptions=bus)

    @mcp.tool()
    async def touch(ctx: mcpdi.Context) -> str:
        await ctx.notify_resource_updated("notes://today")
        return "touched"

    seen: list[Any] = []
    stop = bus.subscribe(seen.append)  # another process's side of a shared bus, say
    async with (
        McpdiClient(mcp, mode=MODERN) as client,
        client.listen(resource_subscriptions=["notes://today"]) as sub,
    ):
        await client.call_tool("touch", {})
        with anyio.fail_after(10):
            assert await anext(sub) == mcpdi.ResourceUpdated("notes://today")
    stop()
    assert seen == [mcpdi.ResourceUpdated("notes://today")]


def test_subscriptions_takes_a_bus_or_false_and_says_so_otherwise() -> None:
    with pytest.raises(TypeError) as caught:
        mcpdi.MCPServer("x", subscriptions="redis://localhost")
    assert str(caught.value) == (
        "MCPServer(subscriptions=...) takes a subscription bus (with async publish(event) and "
        "subscribe(listener)), or False to serve no subscriptions/listen; got 'redis://localhost'"
    )
    quiet = mcpdi.MCPServer("quiet", subscriptions=False)
    assert quiet.subscriptions.listen is None
    assert quiet.server.capabilities("modern").tools == mcp_types.ToolsCapability(list_changed=False)


async def session_notifications(where: Any, mode: str) -> list[str]:
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        heard.append(message.method)

    async with McpdiClient(where, mode=mode, message_handler=on_message) as client:
        await client.call_tool("poke", {})  # the request's stream is read to its end first
    return heard


async def test_ctx_session_change_notifications_travel_only_where_the_era_allows() -> None:
    # 2026-07-28: only listen streams may carry them; both servers drop them from the call's stream.
    seen = {}
    for flavour in FLAVOURS:
        async with serve(load("subscriptions", flavour).mcp.streamable_http_app()) as url:
            seen[flavour] = await session_notifications(url, MODERN)
    assert seen["mcpdi"] == seen["sdk"] == []
    # The handshake era: the client of the request hears them (the SDK sends them on its GET stream).
    assert await session_notifications(load("subscriptions", "mcpdi").mcp, "legacy") == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]


# -- the handshake era over a bus shared by several processes ---------------------------------


def noting_server(name: str, bus: Any = None) -> mcpdi.MCPServer:
    """A server with two resources and a tool that announces an update of either."""
    mcp = mcpdi.MCPServer(name, subscriptions=bus)

    @mcp.resource("notes://{day}")
    def note(day: str) -> str:
        return day

    @mcp.tool()
    async def touch(uri: str, ctx: mcpdi.Context) -> str:
        await ctx.notify_resource_updated(uri)
        return "touched"

    return mcp


async def heard_until_last(heard: Heard, last: str) -> list[str]:
    """Every URI `heard` takes up to `last` (an update announced after the others: what comes
    before it on the connection's channel is all that was sent)."""
    with anyio.fail_after(10):
        while last not in heard.notifications:
            await heard.arrived.wait()
            heard.arrived = anyio.Event()
    uris = heard.notifications[: heard.notifications.index(last) + 1]
    del heard.notifications[: len(uris)]
    return uris


@handshake_subscribe
async def test_a_subscriber_hears_once_what_another_process_on_its_bus_announces_over_http() -> None:
    shared = mcpdi.InMemorySubscriptionBus()
    first, second = noting_server("a", shared), noting_server("b", shared)
    heard = Heard()
    async with (
        serve(first.streamable_http_app()) as first_url,
        serve(second.streamable_http_app()) as second_url,
        Client(first_url, mode="legacy", message_handler=heard) as subscriber,
        Client(second_url, mode="legacy") as elsewhere,
    ):
        await subscriber.subscribe_resource("notes://today")
        await subscriber.subscribe_resource("notes://last")
        await elsewhere.call_tool("touch", {"uri": "notes://today"})  # raised on the other process
        await elsewhere.call_tool("touch", {"uri": "notes://last"})
        assert await heard_until_last(heard, "notes://last") == ["notes://today", "notes://last"]
        await subscriber.unsubscribe_resource("notes://today")
        await elsewhere.call_tool("touch", {"uri": "notes://today"})
        await elsewhere.call_tool("touch", {"uri": "notes://last"})
        assert await heard_until_last(heard, "notes://last") == ["notes://last"]


@handshake_subscribe
async def test_a_subscriber_in_memory_hears_once_what_another_server_on_its_bus_announces() -> None:
    shared = mcpdi.InMemorySubscriptionBus()
    first, second = noting_server("a", shared), noting_server("b", shared)
    heard, unsubscribed = Heard(), Heard()
    async with (
        McpdiClient(first, mode="legacy", message_handler=heard) as subscriber,
        McpdiClient(first, mode="legacy", message_handler=unsubscribed) as other,
        McpdiClient(second, mode="legacy") as elsewhere,
    ):
        await subscriber.subscribe_resource("notes://today")
        await subscriber.subscribe_resource("notes://last")
        await other.subscribe_resource("notes://today")
        await other.unsubscribe_resource("notes://today")
        await other.subscribe_resource("notes://last")
        await elsewhere.call_tool("touch", {"uri": "notes://today"})
        await elsewhere.call_tool("touch", {"uri": "notes://last"})
        assert await heard_until_last(heard, "notes://last") == ["notes://today", "notes://last"]
        assert await heard_until_last(unsubscribed, "notes://last") == ["notes://last"]
        assert first.subscriptions.subscriber_count("notes://last") == 2
    with anyio.fail_after(10):
        while first.subscriptions.subscriber_count("notes://last"):  # the clients ended
            gc.collect()
            await anyio.sleep(0.01)
    await second.subscriptions.announce_updated("notes://last")  # reaches nobody, raises nothing
    assert len(shared) == 0  # neither server runs: neither left its listener


@handshake_subscribe
async def test_an_update_on_the_default_bus_reaches_its_subscriber_once() -> None:
    mcp = noting_server("alone")
    heard = Heard()
    async with (
        serve(mcp.streamable_http_app()) as url,
        Client(url, mode="legacy", message_handler=heard) as client,
    ):
        await client.subscribe_resource("notes://today")
        await client.subscribe_resource("notes://last")
        await client.call_tool("touch", {"uri": "notes://today"})
        await mcp.subscriptions.announce_updated("notes://today")
        await client.call_tool("touch", {"uri": "notes://last"})
        assert await heard_until_last(heard, "notes://last") == ["notes://today"] * 2 + ["notes://last"]
