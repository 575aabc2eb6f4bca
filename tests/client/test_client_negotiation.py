"""How the client picks the protocol era (protocol.md §1.5) and what it puts on every request."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from client_fakes import DISCOVERED, Handler, ScriptedChannel, discovered, initialized, never, scripted_client
from inline_snapshot import snapshot

from mcpdi import MCPError
from mcpdi_transport import Client
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio


def refuse_with(code: int, data: Any = None) -> Any:
    async def handler(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        raise MCPError(code, "refused", data)

    return handler


async def test_auto_mode_adopts_the_modern_era_when_discover_answers() -> None:
    channel = ScriptedChannel({"server/discover": discovered})
    async with scripted_client(channel) as client:
        assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
        assert client.server_info == types.Implementation(name="scripted", version="1")
        assert client.instructions == "scripted"
    assert channel.methods() == ["server/discover"]


@pytest.mark.parametrize(
    ("code", "data"),
    [
        (-32601, "server/discover"),  # a legacy server does not know the method
        (-32602, None),  # a legacy server refuses the request before initialize
        (-32600, None),  # a legacy HTTP server wants a session
        (-32022, {"supported": ["2025-11-25"], "requested": "2026-07-28"}),
    ],
)
async def test_auto_mode_falls_back_to_initialize_on_any_non_modern_answer(code: int, data: Any) -> None:
    channel = ScriptedChannel({"server/discover": refuse_with(code, data), "initialize": initialized})
    async with scripted_client(channel) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
    assert channel.methods() == ["server/discover", "initialize", "notifications/initialized"]


async def test_auto_mode_falls_back_when_discover_goes_unanswered() -> None:
    channel = ScriptedChannel({"server/discover": never, "initialize": initialized}, is_http=False)
    with anyio.fail_after(5):
        async with scripted_client(channel, discover_timeout=0.05) as client:
            assert client.era == "legacy"


async def test_auto_mode_falls_back_when_discover_lists_no_modern_version() -> None:
    async def old_discover(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return {**DISCOVERED, "supportedVersions": ["2025-11-25"]}

    channel = ScriptedChannel({"server/discover": old_discover, "initialize": initialized})
    async with scripted_client(channel) as client:
        assert client.era == "legacy"


async def test_auto_mode_refuses_a_server_that_speaks_only_unknown_versions() -> None:
    data = {"supported": ["2099-01-01"], "requested": "2026-07-28"}
    channel = ScriptedChannel({"server/discover": refuse_with(-32022, data)})
    with pytest.raises(MCPError) as caught:
        async with scripted_client(channel):
            pass
    assert caught.value.code == -32022
    assert caught.value.message == snapshot(
        "The server speaks only protocol versions ['2099-01-01'], none of which this client "
        "knows (['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'])"
    )
    assert channel.methods() == ["server/discover"]


async def test_legacy_mode_never_probes() -> None:
    channel = ScriptedChannel({"initialize": initialized})
    async with scripted_client(channel, mode="legacy") as client:
        assert client.server_info == types.Implementation(name="scripted", version="1")
    assert channel.methods() == ["initialize", "notifications/initialized"]
    init = channel.sent[0]
    assert init.params == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": init.params["clientInfo"],
    }
    assert "mcp-protocol-version" not in init.headers
    assert channel.sent[1].headers["mcp-protocol-version"] == "2025-11-25"


async def test_a_pinned_version_raises_what_discover_answers_instead_of_falling_back() -> None:
    channel = ScriptedChannel({"server/discover": refuse_with(-32601), "initialize": initialized})
    with pytest.raises(MCPError) as caught:
        async with scripted_client(channel, mode="2026-07-28"):
            pass
    assert caught.value.code == -32601
    assert channel.methods() == ["server/discover"]


async def test_an_initialize_answered_with_an_unknown_version_is_refused() -> None:
    async def odd(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return {**await initialized(params, headers), "protocolVersion": "1999-01-01"}

    channel = ScriptedChannel({"initialize": odd})
    with pytest.raises(MCPError) as caught:
        async with scripted_client(channel, mode="legacy"):
            pass
    assert caught.value.message == snapshot(
        "The server answered initialize with protocol version '1999-01-01', which this client "
        "does not speak (it speaks ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])"
    )


async def test_every_modern_request_carries_the_envelope_and_the_routing_headers() -> None:
    async def listing(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return {"resultType": "complete", "prompts": [], "ttlMs": 0, "cacheScope": "private"}

    async def prompt(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return {"resultType": "complete", "messages": []}

    async def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="cancel")

    async def roots(context: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[])

    handlers: dict[str, Handler] = {
        "server/discover": discovered,
        "prompts/list": listing,
        "prompts/get": prompt,
    }
    channel = ScriptedChannel(handlers)
    info = types.Implementation(name="tester", version="9")
    options: dict[str, Any] = {
        "elicitation_callback": elicit,
        "list_roots_callback": roots,
        "client_info": info,
    }
    async with scripted_client(channel, log_level="info", **options) as client:
        await client.list_prompts()
        await client.get_prompt("Grüße", {"to": "you"})
    listed, got = channel.sent[1], channel.sent[2]
    assert listed.params == {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "tester", "version": "9"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "roots": {}},
            "io.modelcontextprotocol/logLevel": "info",
        }
    }
    assert listed.headers == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "prompts/list",
    }
    assert got.headers == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "prompts/get",
        "mcp-name": "=?base64?R3LDvMOfZQ==?=",
    }
    assert [sent.message["id"] for sent in channel.sent] == [1, 2, 3]


def test_an_unknown_mode_is_refused_with_the_modes_there_are() -> None:
    with pytest.raises(ValueError, match="is not a mode") as caught:
        Client("http://127.0.0.1:1/mcp", mode="2025-11-25")
    assert str(caught.value) == snapshot(
        "Client(mode='2025-11-25') is not a mode; use 'auto', 'legacy' or one of ['2026-07-28'] "
        "(handshake versions are negotiated by mode='legacy')"
    )


def test_a_target_that_is_no_server_is_refused() -> None:
    with pytest.raises(TypeError) as caught:
        Client(42)  # pyright: ignore[reportArgumentType]
    assert str(caught.value) == snapshot(
        "Client() cannot connect to a int; pass a URL, a command (a list of strings or a "
        "StdioTarget), or an MCPServer/Server object"
    )


def test_a_round_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_rounds") as caught:
        Client("http://127.0.0.1:1/mcp", max_rounds=0)
    assert str(caught.value) == snapshot("Client(max_rounds=0) must allow at least one round")


async def test_using_a_client_outside_its_context_says_how_to_use_it() -> None:
    client = Client("http://127.0.0.1:1/mcp")
    with pytest.raises(RuntimeError) as caught:
        await client.list_tools()
    assert str(caught.value) == snapshot(
        "The client is not connected; use it as `async with Client(...) as client:`"
    )


async def test_an_initialize_refused_for_a_modern_version_earns_one_more_probe() -> None:
    probes: list[int] = []

    async def slow_then_fast(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        probes.append(1)
        if len(probes) == 1:
            await anyio.sleep_forever()
        return DISCOVERED

    data = {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    handlers: dict[str, Handler] = {
        "server/discover": slow_then_fast,
        "initialize": refuse_with(-32022, data),
    }
    channel = ScriptedChannel(handlers, is_http=False)
    with anyio.fail_after(5):
        async with scripted_client(channel, discover_timeout=0.05) as client:
            assert client.era == "modern"
    assert channel.methods() == ["server/discover", "initialize", "server/discover"]


@pytest.mark.parametrize(
    ("mode", "is_http", "notified"),
    [
        ("legacy", True, True),
        ("legacy", False, True),
        ("2026-07-28", False, True),
        ("2026-07-28", True, False),
    ],
)
async def test_an_abandoned_request_is_cancelled_in_the_words_the_transport_needs(
    mode: str, is_http: bool, notified: bool
) -> None:
    handlers: dict[str, Handler] = {
        "server/discover": discovered,
        "initialize": initialized,
        "tools/call": never,
    }
    channel = ScriptedChannel(handlers, is_http=is_http)
    async with scripted_client(channel, mode=mode) as client:
        with anyio.move_on_after(0.05):
            await client.call_tool("slow")
    call = next(sent for sent in channel.sent if sent.method == "tools/call")
    notices = [sent for sent in channel.sent if sent.method == "notifications/cancelled"]
    if not notified:
        assert notices == []
        return
    assert [notice.params for notice in notices] == [
        {"requestId": call.message["id"], "reason": "The client abandoned the request"}
    ]
