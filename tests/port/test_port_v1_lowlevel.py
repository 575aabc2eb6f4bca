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
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import SERVERS, load, serve, wire

from mcpdi import MCPError
from mcpdi.compat.lowlevel import InitializationOptions, NotificationOptions, Server, stdio_server
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
    assert blob == {"contents": [{"uri": "cover://dune", "mimeType": "image/png", "blob": "iVBORw=="}]}
    assert templated == {
        "contents": [{"uri": "books://Emma", "mimeType": "text/markdown", "text": "The book Emma"}]
    }
    # 1.x answered a raising handler with its message as the JSON-RPC error, code 0
    assert missing == {"code": 0, "message": "Unknown resource: zz://x"}
    assert no_prompt == {"code": 0, "message": "Unknown prompt: nope"}
    assert [item["name"] for item in prompts["prompts"]] == ["review"]
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


def test_a_progress_notification_handler_is_refused_naming_the_change() -> None:
    with pytest.raises(TypeError, match=r"^@server\.progress_notification\(\) is not served by mcpdi"):
        Server("x").progress_notification()


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
