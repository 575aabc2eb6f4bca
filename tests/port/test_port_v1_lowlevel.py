"""Servers in the SDK 1.x low-level style (`@server.list_tools()`, `server.run(read, write, ...)`) on mcpdi.

The server in `servers/v1_lowlevel.py` changes only its import lines; the official client
drives it over stdio (a real subprocess through `stdio_server()`), over Streamable HTTP in
both eras, and mcpdi's client in memory. The answers are the ones 1.x gave.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import SERVERS, load, serve, wire

from mcpdi import MCPError
from mcpdi.compat.lowlevel import InitializationOptions, NotificationOptions, Server, stdio_server
from mcpdi.lowlevel import Connection
from mcpdi_transport import Client as McpdiClient

pytestmark = pytest.mark.anyio

WAYS = ("stdio", "http-legacy", "http-2026-07-28", "memory")


@asynccontextmanager
async def connect(way: str) -> AsyncGenerator[Any]:
    server = load("v1_lowlevel", "sdk").server
    with anyio.fail_after(60):
        if way == "stdio":
            target = StdioServerParameters(command=sys.executable, args=[str(SERVERS / "v1_lowlevel.py")])
            async with Client(target, mode="legacy") as client:
                yield client
        elif way == "memory":
            async with McpdiClient(server) as client:
                yield client
        else:
            async with (
                serve(server.streamable_http_app()) as url,
                Client(url, mode=way.removeprefix("http-")) as client,
            ):
                yield client


def plain(value: Any) -> Any:
    """`wire`, less what only says who answered (`_meta.serverInfo`) and the 2026 result fields."""
    data = wire(value)
    if isinstance(data, dict):
        return {
            key: item
            for key, item in data.items()
            if key not in ("_meta", "resultType", "ttlMs", "cacheScope")
        }  # pyright: ignore[reportUnknownVariableType]
    return data


async def outcome(call: Awaitable[Any]) -> dict[str, Any]:
    """The JSON-RPC error a request ended with, from either client."""
    try:
        await call
    except SdkMCPError as failure:
        return {"code": failure.error.code, "message": failure.error.message}
    except MCPError as failure:
        return {"code": failure.code, "message": failure.message}
    raise AssertionError("the request did not fail")


def error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


@pytest.mark.parametrize("way", WAYS)
async def test_tools_answer_as_in_1x(way: str) -> None:
    async with connect(way) as client:
        listed = await client.list_tools()
        calls = {
            label: plain(await client.call_tool(name, arguments))
            for label, name, arguments in [
                ("structured", "stock", {"title": "Dune"}),
                ("raises", "stock", {"title": "Ulysses"}),
                ("invalid input", "stock", {}),
                ("context", "whoami", {}),
                ("wrong type", "broken", {}),
                ("a tuple of three blocks", "triple", {}),
                ("bad output", "lying", {"title": "Dune"}),
                ("unknown", "nope", {}),
                ("no structured output", "unstructured", {"title": "Dune"}),
                ("content and structured", "both", {"title": "Dune"}),
            ]
        }
    assert [tool.name for tool in listed.tools] == [
        "stock",
        "unstructured",
        "both",
        "whoami",
        "broken",
        "triple",
        "where",
        "heard",
        "asked",
        "lying",
    ]
    assert calls["structured"] == {
        "content": [{"type": "text", "text": '{\n  "copies": 3\n}'}],
        "structuredContent": {"copies": 3},
        "isError": False,
    }
    assert calls["raises"] == error("no book 'Ulysses'")
    assert calls["invalid input"] == error("Input validation error: 'title' is a required property")
    text = calls["context"]["content"][0]["text"]
    assert text.startswith("bookshop:")
    assert text != "bookshop:None"
    assert calls["wrong type"] == error("Unexpected return type from tool: int")
    # only a pair is (content, structured): any other tuple is content, as any iterable
    assert calls["a tuple of three blocks"] == {
        "content": [{"type": "text", "text": word} for word in ("one", "two", "three")],
        "isError": False,
    }
    assert calls["bad output"] == error("Output validation error: 'many' is not of type 'integer'")
    assert calls["unknown"] == error("Unknown tool: nope")
    assert calls["no structured output"] == error(
        "Output validation error: outputSchema defined but no structured output returned"
    )
    assert calls["content and structured"] == {
        "content": [{"type": "text", "text": "three"}],
        "structuredContent": {"copies": 3},
        "isError": False,
    }


@pytest.mark.parametrize("way", WAYS)
async def test_resources_prompts_and_completion_answer_as_in_1x(way: str) -> None:
    async with connect(way) as client:
        resources = plain(await client.list_resources())
        templates = plain(await client.list_resource_templates())
        fixed = plain(await client.read_resource("config://shelves"))
        blob = plain(await client.read_resource("cover://dune"))
        templated = plain(await client.read_resource("books://Emma"))
        missing = await outcome(client.read_resource("zz://x"))
        not_contents = await outcome(client.read_resource("count://books"))
        prompts = plain(await client.list_prompts())
        prompt = plain(await client.get_prompt("review", {"title": "Dune"}))
        no_prompt = await outcome(client.get_prompt("nope", {}))
        ref = mcp_types.PromptReference(name="review")
        completed = (
            plain(await client.session.complete(ref, {"name": "title", "value": "D"}))
            if way != "memory"
            else None
        )
    assert [item["uri"] for item in resources["resources"]] == ["config://shelves", "cover://dune"]
    assert templates == {"resourceTemplates": [{"name": "book", "uriTemplate": "books://{title}"}]}
    assert fixed == {"contents": [{"uri": "config://shelves", "mimeType": "text/plain", "text": "A, B"}]}
    assert blob == {
        "contents": [
            {"uri": "cover://dune", "mimeType": "image/png", "blob": "iVBORw==", "_meta": {"shot": "front"}}
        ]
    }
    assert templated == {
        "contents": [{"uri": "books://Emma", "mimeType": "text/markdown", "text": "The book Emma"}]
    }
    # 1.x answered a raising handler with its message as the JSON-RPC error, code 0
    assert missing == {"code": 0, "message": "Unknown resource: zz://x"}
    assert no_prompt == {"code": 0, "message": "Unknown prompt: nope"}
    # 1.x's text names the type as `type(result)` prints it
    assert not_contents == {"code": 0, "message": "Unexpected return type from read_resource: <class 'int'>"}
    assert [item["name"] for item in prompts["prompts"]] == ["review"]  # one a page: see the paging test
    assert prompt == {
        "description": "A review",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Review Dune"}}],
    }
    if completed is not None:
        assert completed == {"completion": {"values": ["Dune"], "total": 1, "hasMore": False}}


async def test_the_handshake_announces_what_the_decorators_registered() -> None:
    server = load("v1_lowlevel", "sdk").server
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    assert isinstance(options, InitializationOptions)
    assert (options.server_name, options.server_version, options.instructions) == (
        "bookshop",
        "1.2.0",
        "Ask about books.",
    )
    capabilities = options.capabilities
    assert capabilities.tools is not None
    assert capabilities.resources is not None
    assert capabilities.prompts is not None
    assert capabilities.completions is not None


def test_a_server_without_decorators_announces_nothing() -> None:
    capabilities = Server("empty").create_initialization_options().capabilities
    assert (capabilities.tools, capabilities.resources, capabilities.prompts) == (None, None, None)


def test_request_context_outside_a_request_is_a_lookup_error() -> None:
    with pytest.raises(LookupError):
        _ = Server("x").request_context


async def test_run_refuses_streams_it_cannot_serve() -> None:
    with pytest.raises(TypeError, match=r"takes the pair stdio_server\(\) yields"):
        await Server("x").run(object(), object(), None)


async def test_stdio_server_yields_the_pair_run_takes() -> None:
    async with stdio_server() as (read, write):
        assert (repr(read), repr(write)) == ("<mcpdi stdio stdin>", "<mcpdi stdio stdout>")


NEEDS_JSONSCHEMA = (
    "checking a tool's inputSchema or outputSchema needs the jsonschema package, as in 1.x: "
    "pip install jsonschema"
)


def test_without_jsonschema_validating_input_is_refused_when_the_handler_is_registered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as if it were not installed
    server = Server("x")
    with pytest.raises(ImportError) as refused:
        server.call_tool()
    assert str(refused.value) == f"{NEEDS_JSONSCHEMA}, or pass @server.call_tool(validate_input=False)"
    server.call_tool(validate_input=False)  # asked not to check, it needs nothing


async def test_without_jsonschema_an_output_schema_fails_the_call_instead_of_going_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    server = Server("x")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    @server.list_tools()
    async def list_tools() -> list[mcp_types.Tool]:
        return [mcp_types.Tool(name="count", input_schema={"type": "object"}, output_schema=schema)]

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"n": "not a number"}

    with anyio.fail_after(20):
        async with McpdiClient(server) as client:
            result = await client.call_tool("count", {})
    assert plain(result) == error(f"Output validation error: {NEEDS_JSONSCHEMA}")


HTTP_WAYS = ("http-legacy", "http-2026-07-28")


@pytest.mark.parametrize("way", WAYS)
async def test_request_context_has_the_http_request_and_the_meta_of_1x(way: str) -> None:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    async with connect(way) as client:
        if way == "memory":
            result = await client.call_tool("where", {})
        else:
            result = await client.call_tool("where", {}, progress_callback=on_progress)
    text = plain(result)["content"][0]["text"]
    how, token = text.split("; ")
    # `request` is the Starlette request of the POST over HTTP, None on stdio (and in memory)
    assert how == ("POST /mcp" if way in HTTP_WAYS else "stdio")
    # `meta.progressToken` as 1.x's `RequestParams.Meta` has it, when the client asked for progress
    assert (token == "token None") == (way == "memory")


@pytest.mark.parametrize("way", ["stdio", "http-legacy"])
async def test_the_clients_progress_notifications_reach_the_1x_handler(way: str) -> None:
    load("v1_lowlevel", "sdk").HEARD.clear()
    async with connect(way) as client:
        with pytest.warns(MCPDeprecationWarning, match="^Client-to-server progress is deprecated"):
            await client.send_progress_notification("upload-7", 0.5, 2.0, "half way")
        heard = plain(await client.call_tool("heard", {}))
    assert heard["content"][0]["text"] == "[('upload-7', 0.5, 2.0, 'half way')]"


async def test_the_clients_progress_notifications_reach_the_1x_handler_in_memory() -> None:
    module = load("v1_lowlevel", "sdk")
    module.HEARD.clear()
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 1, "total": None},
    }
    with anyio.fail_after(20):
        async with module.server.running() as runner:
            connection = Connection.for_stream()
            assert await runner.handle(note, connection, SilentPeer()) is None
    assert module.HEARD == [(7, 1.0, None, None)]


@pytest.mark.parametrize("way", ["stdio", "http-legacy"])
async def test_logging_level_and_subscriptions_reach_the_1x_handlers(way: str) -> None:
    module = load("v1_lowlevel", "sdk")
    module.LEVELS.clear()
    module.SUBSCRIBED.clear()
    async with connect(way) as client:
        capabilities = client.server_capabilities
        # the official client warns: both are gone at 2026-07-28, served in the handshake era
        with pytest.warns(MCPDeprecationWarning, match="^The logging capability is deprecated"):
            await client.set_logging_level("error")
        with pytest.warns(MCPDeprecationWarning, match="^resources/subscribe is removed"):
            await client.subscribe_resource("books://Dune")
        with pytest.warns(MCPDeprecationWarning, match="^resources/unsubscribe is removed"):
            await client.unsubscribe_resource("books://Dune")
        asked = plain(await client.call_tool("asked", {}))
    assert asked["content"][0]["text"] == "['error'] ['+books', '-books']"
    assert capabilities is not None
    assert capabilities.logging is not None
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True


async def test_stdio_announces_the_initialization_options_run_was_given() -> None:
    async with connect("stdio") as client:
        capabilities = client.server_capabilities
    assert capabilities is not None
    assert capabilities.tools is not None
    # main() passed NotificationOptions(tools_changed=True): 1.x announced what run() was given
    assert capabilities.tools.list_changed is True


@pytest.mark.parametrize("way", WAYS)
async def test_a_list_handler_typed_for_the_request_is_given_it_and_pages(way: str) -> None:
    async with connect(way) as client:
        first = await client.list_prompts()
        second = await client.list_prompts(cursor=first.next_cursor)
    assert ([p.name for p in first.prompts], first.next_cursor) == (["review"], "1")
    assert ([p.name for p in second.prompts], second.next_cursor) == (["blurb"], None)


def test_get_capabilities_derives_them_as_1x_did() -> None:
    server = load("v1_lowlevel", "sdk").server
    capabilities = server.get_capabilities(NotificationOptions(prompts_changed=True), {"shop": {"v": 1}})
    assert wire(capabilities) == {
        "completions": {},
        "experimental": {"shop": {"v": 1}},
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": False, "subscribe": True},
        "tools": {"listChanged": False},
    }
    assert Server("quiet").get_capabilities(NotificationOptions(), {}) == mcp_types.ServerCapabilities()


async def test_a_failing_tool_listing_during_a_call_is_the_calls_error_result() -> None:
    server = Server("x")
    listed: list[str] = []

    @server.list_tools()
    async def list_tools() -> list[mcp_types.Tool]:
        listed.append("listed")
        raise RuntimeError("the catalogue is down")

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[mcp_types.TextContent]:
        return [mcp_types.TextContent(text="unreachable")]

    with anyio.fail_after(20):
        async with McpdiClient(server) as client:
            result = await client.call_tool("count", {})
    assert plain(result) == error("the catalogue is down")
    assert listed == ["listed"]


async def test_a_paged_tool_listing_adds_to_the_tools_1x_remembered() -> None:
    server = Server("x")
    pages = {None: ["first"], "2": ["second"]}
    listings: list[str | None] = []

    @server.list_tools()
    async def list_tools(request: mcp_types.ListToolsRequest) -> mcp_types.ListToolsResult:
        cursor = request.params.cursor if request.params is not None else None
        listings.append(cursor)
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
        tools = [mcp_types.Tool(name=name, input_schema=schema) for name in pages[cursor]]
        return mcp_types.ListToolsResult(tools=tools, next_cursor="2" if cursor is None else None)

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[mcp_types.TextContent]:
        return [mcp_types.TextContent(text=name)]

    with anyio.fail_after(20):
        async with McpdiClient(server) as client:
            await client.list_tools()
            await client.list_tools(cursor="2")
            first = await client.call_tool("first", {"n": "not a number"})
    # the first page's tool is still known (validated) without listing again
    assert plain(first) == error("Input validation error: 'not a number' is not of type 'integer'")
    assert listings == [None, "2"]


async def test_a_raising_progress_handler_is_logged_and_the_connection_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("x")

    @server.progress_notification()
    async def progress(token: str | int, progress: float, total: float | None, message: str | None) -> None:
        raise RuntimeError("no one listens")

    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1},
    }
    bad = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "lots"}}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with anyio.fail_after(20):
        async with server.running() as runner:
            connection = Connection.for_stream()
            assert await runner.handle(note, connection, SilentPeer()) is None
            assert await runner.handle(bad, connection, SilentPeer()) is None
            assert await runner.handle(ping, connection, SilentPeer()) == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {},
            }
    messages = [record.getMessage() for record in caplog.records]
    assert "handler for notification 'notifications/progress' raised" in messages
    assert any(text.startswith("dropped 'notifications/progress' with invalid params: ") for text in messages)


def test_the_runners_own_notifications_cannot_be_handled() -> None:
    async def handler(ctx: Any, params: Any) -> None:
        pass

    with pytest.raises(ValueError, match=r"^'notifications/cancelled' is taken by the server itself"):
        Server("x").add_notification_handler("notifications/cancelled", mcp_types.NotificationParams, handler)


class SilentPeer:
    """A peer whose client hears nothing: what a notification's handling needs."""

    @property
    def headers(self) -> None:
        return None

    async def notify(self, method: str, params: Any) -> None:
        pass

    async def request(self, method: str, params: Any, *, asking: str | None = None) -> dict[str, Any]:
        raise AssertionError("no requests are sent here")
