"""Servers written for the SDK's 1.x line (`mcp.server.fastmcp`) run on mcpdi with an import swap.

mcp 2.x refuses to import them at all; ported to `mcpdi.compat.fastmcp` they serve the
official client in both eras: tools, resources, templates, prompts, Context, lifespan.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import MODES, load, outcome, serve, text, wire

from mcpdi.compat.fastmcp import FastMCP

pytestmark = pytest.mark.anyio


def test_the_sdk_no_longer_imports_a_v1_server() -> None:
    renamed = r"This is mcp 2\.x, where FastMCP was renamed to MCPServer"
    with pytest.raises(ModuleNotFoundError, match=renamed):
        load("v1_fastmcp", "sdk")


@pytest.mark.parametrize("mode", MODES)
async def test_a_v1_server_serves_the_official_client(mode: str) -> None:
    server = load("v1_fastmcp", "mcpdi").mcp
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async with (
        serve(server.streamable_http_app()) as url,
        Client(url, mode=mode, logging_callback=on_log) as client,
    ):
        tools = await client.list_tools()
        stock = await client.call_tool("stock", {"title": "Dune"})
        missing = await client.call_tool("stock", {"title": "Ulysses"})
        template = await client.read_resource("books://Emma")
        fixed = await client.read_resource("config://shelves")
        prompt = await client.get_prompt("review", {"title": "Dune"})
        unknown = await outcome(client.get_prompt("nope", {}))
    assert [(tool.name, tool.description) for tool in tools.tools] == [
        ("stock", "How many copies are on the shelf.")
    ]
    assert (text(stock), stock.structured_content) == ("3", {"result": 3})
    assert (missing.is_error, text(missing)) == (True, "Error executing tool stock: no book 'Ulysses'")
    assert wire(template.contents)[0]["text"] == "The book Emma"
    assert wire(fixed.contents)[0]["text"] == "A, B"
    messages: list[Any] = list(prompt.messages)
    assert [(m.role, m.content.text) for m in messages] == [
        ("user", "Review Dune"),
        ("assistant", "Gladly."),
    ]  # pyright: ignore[reportAttributeAccessIssue]
    assert unknown["error"] == -32602
    # ctx.info: the handshake era streams log messages; 2026-07-28 sends them only on opt-in
    assert logs == (["looking up Dune", "looking up Ulysses"] if mode == "legacy" else [])


def test_settings_are_the_v1_fields_and_mutable_before_run() -> None:
    server = load("v1_fastmcp", "mcpdi").mcp
    assert (server.settings.host, server.settings.port, server.settings.stateless_http) == (
        "127.0.0.1",
        9000,
        False,
    )
    server.settings.streamable_http_path = "/rpc"
    app = server.streamable_http_app()
    server.settings.streamable_http_path = "/mcp"
    assert any(getattr(route, "path", None) == "/rpc" for route in app.routes)


def test_the_v1_event_store_is_refused_naming_the_alternative() -> None:
    with pytest.raises(TypeError, match=r"^streamable_http_app\(event_store=\.\.\.\) is not taken by mcpdi"):
        FastMCP("x", event_store=object()).streamable_http_app()
