"""How mistakes become JSON-RPC errors: framing, unknown methods, bad params, failing handlers."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import pytest
from core_doubles import RecordingPeer, handshake, make_server, modern_request, request
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi.lowlevel import Connection, MCPError, Runner, ServerRequestContext, http_status_for

pytestmark = pytest.mark.anyio

Ctx = ServerRequestContext
CallParams = types.CallToolRequestParams


async def legacy_connection(runner: Runner[Any]) -> Connection:
    connection = Connection.for_stream()
    await handshake(runner, connection, RecordingPeer())
    return connection


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        (
            ["not", "an", "object"],
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": "Invalid request: a JSON-RPC message must be a JSON object",
                    },
                }
            ),
        ),
        (
            {"jsonrpc": "1.0", "id": 3, "method": "ping"},
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "error": {"code": -32600, "message": "Invalid request: 'jsonrpc' must be \"2.0\""},
                }
            ),
        ),
        (
            {"jsonrpc": "2.0", "id": None, "method": "ping"},
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": "Invalid request: 'id' must be a string or an integer",
                    },
                }
            ),
        ),
        (
            {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1, 2]},
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "error": {"code": -32600, "message": "Invalid request: 'params' must be an object"},
                }
            ),
        ),
        (
            {"jsonrpc": "2.0", "id": 5, "method": 42},
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "error": {"code": -32600, "message": "Invalid request: 'method' must be a string"},
                }
            ),
        ),
        (
            {"jsonrpc": "2.0", "id": 6},
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": 6,
                    "error": {
                        "code": -32600,
                        "message": "Invalid request: the message has no 'method' and is not a response",
                    },
                }
            ),
        ),
    ],
    ids=["array", "wrong-version", "null-id", "array-params", "numeric-method", "no-method"],
)
async def test_a_message_that_is_not_json_rpc_is_an_invalid_request(
    runner: Runner[Any], peer: RecordingPeer, message: Any, answer: dict[str, Any]
) -> None:
    assert await runner.handle(message, Connection.for_stream(), peer) == answer


async def test_client_responses_and_notifications_get_no_answer(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    assert await runner.handle({"jsonrpc": "2.0", "id": 1, "result": {}}, connection, peer) is None
    assert (
        await runner.handle({"jsonrpc": "2.0", "method": "notifications/whatever"}, connection, peer) is None
    )
    assert peer.notifications == []


async def test_an_unknown_method_is_method_not_found_with_the_method_as_data(runner: Runner[Any]) -> None:
    connection = await legacy_connection(runner)
    answer = await runner.handle(request(1, "foo/bar"), connection, RecordingPeer())
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "Method not found", "data": "foo/bar"},
        }
    )


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_params_that_do_not_fit_the_method_are_invalid_params_naming_the_field(
    runner: Runner[Any], era: str
) -> None:
    if era == "legacy":
        connection = await legacy_connection(runner)
        message = request(1, "tools/call", {"arguments": {"text": "hi"}})
    else:
        connection = Connection.for_modern_request()
        message = modern_request(1, "tools/call", {"arguments": {"text": "hi"}})
    answer = await runner.handle(message, connection, RecordingPeer())
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32602, "message": "Invalid params for 'tools/call': name: Field required"},
        }
    )


async def test_a_failing_handler_is_an_internal_error_that_leaks_nothing_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def call_tool(ctx: Ctx, params: CallParams) -> types.CallToolResult:
        raise RuntimeError("database password is hunter2")

    caplog.set_level(logging.ERROR, logger="mcpdi")
    async with make_server(on_call_tool=call_tool).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/call", {"name": "x"}), Connection.for_modern_request(), RecordingPeer()
        )
    assert answer == snapshot(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal server error"}}
    )
    assert "hunter2" in caplog.text


async def test_an_mcp_error_from_a_handler_reaches_the_client_unchanged() -> None:
    async def call_tool(ctx: Ctx, params: CallParams) -> types.CallToolResult:
        raise MCPError(-32602, f"Unknown tool: {params.name}", {"tool": params.name})

    async with make_server(on_call_tool=call_tool).running() as runner:
        connection = await legacy_connection(runner)
        answer = await runner.handle(request(1, "tools/call", {"name": "nope"}), connection, RecordingPeer())
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32602, "message": "Unknown tool: nope", "data": {"tool": "nope"}},
        }
    )


async def test_a_validation_error_from_a_handler_is_invalid_params_without_the_input() -> None:
    class Arguments(BaseModel):
        count: int

    async def call_tool(ctx: Ctx, params: CallParams) -> types.CallToolResult:
        Arguments.model_validate(params.arguments or {})
        return types.CallToolResult(content=[])

    async with make_server(on_call_tool=call_tool).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/call", {"name": "x", "arguments": {"count": "secret"}}),
            Connection.for_modern_request(),
            RecordingPeer(),
        )
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid params for 'tools/call': count: Input should be a valid integer, "
                "unable to parse string as an integer",
            },
        }
    )


@pytest.mark.parametrize(
    "returned",
    [
        types.CallToolResult.model_construct(content="not a list"),
        42,
        types.InputRequiredResult(request_state="s"),
    ],
    ids=["invalid-model", "not-a-result", "input-required-in-the-handshake-era"],
)
async def test_a_result_the_handshake_era_cannot_carry_is_an_internal_error(returned: Any) -> None:
    async def call_tool(ctx: Ctx, params: CallParams) -> Any:
        return returned

    async with make_server(on_call_tool=call_tool).running() as runner:
        connection = await legacy_connection(runner)
        answer = await runner.handle(request(1, "tools/call", {"name": "x"}), connection, RecordingPeer())
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Handler returned an invalid result"},
    }


async def test_an_input_required_result_is_refused_for_a_method_that_cannot_carry_it() -> None:
    async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> Any:
        return types.InputRequiredResult(request_state="s")

    async with make_server(on_list_tools=list_tools).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/list"), Connection.for_modern_request(), RecordingPeer()
        )
    assert answer is not None
    assert answer["error"] == {"code": -32603, "message": "Handler returned an invalid result"}


def test_http_statuses_follow_the_error_class() -> None:
    codes = [-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -32000, 1]
    assert {code: http_status_for(code) for code in codes} == snapshot(
        {
            -32700: 400,
            -32600: 400,
            -32601: 404,
            -32602: 400,
            -32603: 200,
            -32020: 400,
            -32021: 400,
            -32022: 400,
            -32000: 200,
            1: 200,
        }
    )
