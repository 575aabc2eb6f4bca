"""Cancellation: `notifications/cancelled` or `Runner.cancel` stops a handler; no answer follows."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from core_doubles import RecordingPeer, handshake, make_server, modern_request, request

from mcpdi.lowlevel import Connection, Runner, ServerRequestContext

pytestmark = pytest.mark.anyio


def cancelled(request_id: int | str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_cancelled_request_stops_its_handler_and_is_not_answered(era: str) -> None:
    started = anyio.Event()
    stopped: list[bool] = []

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(True)
        raise AssertionError("unreachable")

    peer = RecordingPeer()
    answers: list[dict[str, Any] | None] = []
    async with make_server(on_call_tool=call_tool).running() as runner:
        connection = Connection.for_stream()
        if era == "legacy":
            await handshake(runner, connection, peer)
            message = request(7, "tools/call", {"name": "slow"})
        else:
            message = modern_request(7, "tools/call", {"name": "slow"})

        async def serve() -> None:
            answers.append(await runner.handle(message, connection, peer))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(serve)
                await started.wait()
                assert await runner.handle(cancelled(7), connection, peer) is None
    assert answers == [None]
    assert stopped == [True]
    assert connection.in_flight == {}


async def test_cancelling_an_unknown_request_changes_nothing(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    assert runner.cancel(connection, 99) is False
    assert await runner.handle(cancelled(99), connection, peer) is None
    answer = await runner.handle(request(1, "ping"), connection, peer)
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_a_finished_request_leaves_nothing_to_cancel(runner: Runner[Any], peer: RecordingPeer) -> None:
    connection = Connection.for_modern_request()
    await runner.handle(modern_request(1, "tools/list"), connection, peer)
    assert connection.in_flight == {}
    assert runner.cancel(connection, 1) is False
