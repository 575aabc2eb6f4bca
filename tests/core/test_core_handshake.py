"""The handshake era (protocol ≤ 2025-11-25) through `Runner.handle`."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from core_doubles import RecordingPeer, handshake, initialize, make_server, modern_request, request
from inline_snapshot import snapshot

from mcpdi.lowlevel import Connection, Runner, ServerRequestContext

pytestmark = pytest.mark.anyio


async def test_initialize_echoes_a_supported_version_with_capabilities_and_identity(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    answer = await runner.handle(initialize(1, "2025-06-18"), connection, peer)
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "capabilities": {"logging": {}, "tools": {"listChanged": False}},
                "instructions": "Test server.",
                "protocolVersion": "2025-06-18",
                "serverInfo": {"name": "core-test", "version": "0.1.0"},
            },
        }
    )
    assert connection.era == "legacy"
    assert connection.protocol_version == "2025-06-18"
    assert connection.client_info == types.Implementation(name="test-client", version="0.0.1")


async def test_initialize_with_an_unknown_version_is_answered_with_the_latest_handshake_version(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    answer = await runner.handle(initialize(1, "1900-01-01"), Connection.for_stream(), peer)
    assert answer is not None
    assert answer["result"]["protocolVersion"] == "2025-11-25"


async def test_initialize_with_malformed_params_is_invalid_params(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    answer = await runner.handle(
        request(1, "initialize", {"protocolVersion": 5}), Connection.for_stream(), peer
    )
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid params for 'initialize': protocolVersion: Input should be a valid "
                "string; capabilities: Field required; clientInfo: Field required",
            },
        }
    )


async def test_a_served_request_before_initialize_is_refused_but_ping_is_answered(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    refused = await runner.handle(request(1, "tools/list"), connection, peer)
    assert refused == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Received 'tools/list' before initialization; send 'initialize' first",
            },
        }
    )
    assert await runner.handle(request(2, "ping"), connection, peer) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }


async def test_a_bare_initialized_notification_opens_the_gate(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    assert (
        await runner.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection, peer)
        is None
    )
    answer = await runner.handle(request(1, "tools/list"), connection, peer)
    assert answer is not None
    assert "result" in answer


async def test_initialize_opens_the_gate_before_the_initialized_notification(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    await runner.handle(initialize(), connection, peer)
    answer = await runner.handle(request(1, "tools/list"), connection, peer)
    assert answer is not None
    assert "result" in answer


async def test_handshake_results_carry_no_modern_stamps(runner: Runner[Any], peer: RecordingPeer) -> None:
    connection = Connection.for_stream()
    await handshake(runner, connection, peer)
    listing = await runner.handle(request(1, "tools/list"), connection, peer)
    call = await runner.handle(
        request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}), connection, peer
    )
    assert listing == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "tools": [
                    {
                        "description": "Echo the text back.",
                        "inputSchema": {
                            "properties": {"text": {"type": "string"}},
                            "required": ["text"],
                            "type": "object",
                        },
                        "name": "echo",
                    }
                ]
            },
        }
    )
    assert call == snapshot(
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"text": "hi", "type": "text"}], "isError": False}}
    )


async def test_a_legacy_http_session_serves_a_request_that_carries_a_modern_envelope(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_legacy_session()
    await handshake(runner, connection, peer)
    answer = await runner.handle(modern_request(1, "tools/list"), connection, peer)
    assert answer is not None
    assert set(answer["result"]) == {"tools"}


async def test_set_level_filters_log_messages_and_reaches_the_handler() -> None:
    levels: list[str] = []

    async def set_level(ctx: ServerRequestContext, params: types.SetLevelRequestParams) -> types.EmptyResult:
        levels.append(params.level)
        return types.EmptyResult()

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        await ctx.log("info", "chatty")
        await ctx.log("error", {"what": "broken"}, logger="db")
        return types.CallToolResult(content=[])

    peer = RecordingPeer()
    async with make_server(on_call_tool=call_tool, on_set_logging_level=set_level).running() as runner:
        connection = Connection.for_stream()
        await handshake(runner, connection, peer)
        await runner.handle(request(1, "tools/call", {"name": "x"}), connection, peer)
        assert [params["level"] for _, params in peer.notifications if params] == ["info", "error"]
        peer.notifications.clear()
        answer = await runner.handle(request(2, "logging/setLevel", {"level": "warning"}), connection, peer)
        assert answer == {"jsonrpc": "2.0", "id": 2, "result": {}}
        await runner.handle(request(3, "tools/call", {"name": "x"}), connection, peer)
    assert levels == ["warning"]
    assert connection.log_level == "warning"
    assert peer.notifications == [
        ("notifications/message", {"level": "error", "data": {"what": "broken"}, "logger": "db"})
    ]


async def test_set_level_rejects_an_unknown_level(runner: Runner[Any], peer: RecordingPeer) -> None:
    connection = Connection.for_stream()
    await handshake(runner, connection, peer)
    answer = await runner.handle(request(1, "logging/setLevel", {"level": "loud"}), connection, peer)
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid params for 'logging/setLevel': level: Input should be 'alert', "
                "'critical', 'debug', 'emergency', 'error', 'info', 'notice' or 'warning'",
            },
        }
    )


async def test_a_handler_can_ask_the_client_in_the_handshake_era() -> None:
    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        roots = await ctx.send_request("roots/list")
        return types.CallToolResult(content=[types.TextContent(type="text", text=roots["roots"][0]["uri"])])

    peer = RecordingPeer(answer=lambda method, params: {"roots": [{"uri": "file:///project"}]})
    async with make_server(on_call_tool=call_tool).running() as runner:
        connection = Connection.for_stream()
        await handshake(runner, connection, peer)
        answer = await runner.handle(request(1, "tools/call", {"name": "x"}), connection, peer)
    assert answer is not None
    assert answer["result"]["content"][0]["text"] == "file:///project"
    assert peer.requests == [("roots/list", None)]
