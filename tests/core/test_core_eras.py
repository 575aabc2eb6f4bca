"""How a connection picks its era, what it says to the other era, and the methods it does not serve."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from core_doubles import RecordingPeer, handshake, initialize, modern_request, request
from inline_snapshot import snapshot

from mcpdi.lowlevel import Connection, Runner

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("first", "then", "era", "refusal"),
    [
        pytest.param(
            modern_request(1, "server/discover"),
            initialize(2),
            "modern",
            snapshot(
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
            ),
            id="a-valid-envelope-locks-it-to-2026",
        ),
        pytest.param(
            initialize(1),
            modern_request(2, "tools/list"),
            "legacy",
            snapshot(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "error": {
                        "code": -32600,
                        "message": "this connection serves the handshake protocol era; requests carrying the "
                        "2026-07-28 envelope are not accepted on it",
                    },
                }
            ),
            id="no-envelope-locks-it-to-the-handshake-era",
        ),
    ],
)
async def test_the_first_request_locks_the_stream_to_its_era_and_the_other_era_is_refused(
    runner: Runner[Any], peer: RecordingPeer, first: Any, then: Any, era: str, refusal: Any
) -> None:
    connection = Connection.for_stream()
    await runner.handle(first, connection, peer)
    refused = await runner.handle(then, connection, peer)
    assert connection.era == era
    assert refused == refusal


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


@pytest.mark.parametrize(
    ("connect", "after_handshake", "message"),
    [
        pytest.param(
            Connection.for_modern_request,
            False,
            modern_request(1, "initialize"),
            id="initialize-in-a-modern-http-request",
        ),
        pytest.param(
            Connection.for_stream,
            False,
            request(1, "prompts/list"),
            id="an-unserved-method-before-initialize",
        ),
        pytest.param(
            Connection.for_stream,
            True,
            request(1, "server/discover"),
            id="server-discover-in-the-handshake-era",
        ),
    ],
)
async def test_a_method_the_connection_does_not_serve_is_method_not_found_naming_it(
    runner: Runner[Any],
    peer: RecordingPeer,
    connect: Callable[[], Connection],
    after_handshake: bool,
    message: dict[str, Any],
) -> None:
    connection = connect()
    if after_handshake:
        await handshake(runner, connection, peer)
    answer = await runner.handle(message, connection, peer)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found", "data": message["method"]},
    }


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
