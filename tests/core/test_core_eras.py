"""How a stream connection (stdio) picks its era, and what it says to the other era afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from core_doubles import RecordingPeer, initialize, modern_request, request
from inline_snapshot import snapshot

from mcpdi._connection import Connection
from mcpdi._runner import Runner

pytestmark = pytest.mark.anyio


async def test_a_first_request_with_a_valid_envelope_locks_the_stream_to_2026(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    await runner.handle(modern_request(1, "server/discover"), connection, peer)
    refused = await runner.handle(initialize(2), connection, peer)
    assert connection.era == "modern"
    assert refused == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {
                "code": -32022,
                "message": "connection is serving the 2026-07-28 protocol; "
                "the initialize handshake is not accepted",
                "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
            },
        }
    )


async def test_a_first_request_without_an_envelope_locks_the_stream_to_the_handshake_era(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    await runner.handle(initialize(1), connection, peer)
    refused = await runner.handle(modern_request(2, "tools/list"), connection, peer)
    assert connection.era == "legacy"
    assert refused == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {
                "code": -32600,
                "message": "this connection serves the handshake protocol era; requests carrying the "
                "2026-07-28 envelope are not accepted on it",
            },
        }
    )


async def test_a_rejected_probe_does_not_lock_the_stream_so_the_client_can_fall_back(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    probe = await runner.handle(modern_request(1, "server/discover", version="2099-01-01"), connection, peer)
    assert probe is not None
    assert probe["error"]["code"] == -32022
    assert connection.era == "unset"
    answer = await runner.handle(initialize(2), connection, peer)
    assert answer is not None
    assert answer["result"]["protocolVersion"] == "2025-11-25"


async def test_initialize_carrying_an_envelope_still_opens_the_handshake_era(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    connection = Connection.for_stream()
    message = initialize(1)
    message["params"]["_meta"] = modern_request(0, "x")["params"]["_meta"]
    answer = await runner.handle(message, connection, peer)
    assert answer is not None
    assert "result" in answer
    assert connection.era == "legacy"


async def test_a_modern_http_request_answers_initialize_as_method_not_found(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    answer = await runner.handle(modern_request(1, "initialize"), Connection.for_modern_request(), peer)
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "Method not found", "data": "initialize"},
        }
    )


async def test_both_eras_are_served_side_by_side_by_one_runner(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    legacy, modern = Connection.for_stream(), Connection.for_stream()
    await runner.handle(initialize(1), legacy, peer)
    old = await runner.handle(request(2, "tools/list"), legacy, peer)
    new = await runner.handle(modern_request(2, "tools/list"), modern, peer)
    assert old is not None
    assert new is not None
    assert "resultType" not in old["result"]
    assert new["result"]["resultType"] == "complete"
