"""The low-level examples of seed 001 ("Header-Parameter") run unchanged apart from their imports.

The examples' text is in `tests/seed_lowlevel_server.py`.
"""

from __future__ import annotations

from typing import Any

import pytest
from core_doubles import RecordingPeer, handshake, modern_request, request
from seed_lowlevel_server import HANDLERS, IMPORTS, SCHEMA_BY_NAME, TOOL, run_seed

import mcpdi_transport
from mcpdi.lowlevel import Connection

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["title", "region"],
}

ARGUMENTS = {"name": "check_stock", "arguments": {"title": "Dune", "region": "EU"}}


@pytest.fixture
def built_apps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    built: list[tuple[Any, dict[str, Any]]] = []

    def build_http_app(server: Any, **options: Any) -> str:
        built.append((server, options))
        return "the app"

    monkeypatch.setattr(mcpdi_transport, "build_http_app", build_http_app, raising=False)
    return built


@pytest.mark.parametrize("example", [HANDLERS, SCHEMA_BY_NAME], ids=["handlers", "schema-by-name"])
async def test_the_seed_server_lists_its_marked_tool_and_answers_calls_in_both_eras(
    built_apps: list[tuple[Any, dict[str, Any]]], example: str
) -> None:
    seed = run_seed(IMPORTS, TOOL, example)
    assert seed["app"] == "the app"
    assert built_apps == [(seed["server"], {})]
    peer = RecordingPeer()
    async with seed["server"].running() as runner:
        legacy = Connection.for_stream()
        await handshake(runner, legacy, peer)
        old_list = await runner.handle(request(1, "tools/list"), legacy, peer)
        old_call = await runner.handle(request(2, "tools/call", ARGUMENTS), legacy, peer)
        new_list = await runner.handle(modern_request(1, "tools/list"), Connection.for_modern_request(), peer)
        new_call = await runner.handle(
            modern_request(2, "tools/call", ARGUMENTS), Connection.for_modern_request(), peer
        )
    for listing in (old_list, new_list):
        assert listing is not None
        assert listing["result"]["tools"][0]["inputSchema"] == SCHEMA
    for call in (old_call, new_call):
        assert call is not None
        assert call["result"]["content"] == [{"type": "text", "text": "Dune: 3 copies in EU."}]


@pytest.mark.parametrize("example", [HANDLERS, SCHEMA_BY_NAME], ids=["from-tools-list", "from-the-getter"])
async def test_the_seed_server_gives_the_schema_for_mcp_param_checks(
    built_apps: list[tuple[Any, dict[str, Any]]], example: str
) -> None:
    seed = run_seed(IMPORTS, TOOL, example)
    async with seed["server"].running() as runner:
        assert await runner.tool_input_schema("check_stock") == SCHEMA
        assert await runner.tool_input_schema("nope") is None
