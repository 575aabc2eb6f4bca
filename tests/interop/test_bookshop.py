"""The seed's bookshop (`examples/bookshop.py`) served by mcpdi, driven by the official client and mcpdi's."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp_types as types
import pytest
from interop_clients import AnyRequestContext, any_client, text_of
from interop_servers import RecordingApp, serve_app

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BOOKSHOP = Path(__file__).parents[2] / "examples" / "bookshop.py"
MODES = ["legacy", "2026-07-28", "auto"]
CLIENTS = ["sdk", "mcpdi"]


def bookshop() -> ModuleType:
    if "bookshop" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bookshop", BOOKSHOP)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bookshop"] = module
        spec.loader.exec_module(module)
    return sys.modules["bookshop"]


def app() -> Any:
    return bookshop().mcp.streamable_http_app()


async def confirm(context: AnyRequestContext, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


@pytest.fixture(params=["http", "stdio"])
async def target(request: pytest.FixtureRequest) -> AsyncGenerator[Any]:
    if request.param == "stdio":
        yield [sys.executable, "-m", "mcpdi_transport", "run", str(BOOKSHOP)]
        return
    async with serve_app(app()) as url:
        yield url


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_backorder_is_confirmed_through_the_clients_elicitation_callback(
    target: Any, kind: str, mode: str
) -> None:
    async with any_client(kind, target, mode, elicitation_callback=confirm) as client:
        result = await client.call_tool("order_book", {"title": "Neuromancer"})
        assert text_of(result) == "Backordered 'Neuromancer'; it ships in 2-3 weeks."
        result = await client.call_tool("reserve_book", {"title": "Dune"})
        assert text_of(result) == "Reserved 'Dune' (6 copies left)."


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("mode", MODES)
async def test_the_region_header_tool_works_for_a_client_that_never_listed_tools(
    target: Any, kind: str, mode: str
) -> None:
    async with any_client(kind, target, mode) as client:
        result = await client.call_tool("stock_in_region", {"title": "Dune", "region": "eu-west"})
        assert text_of(result) == "Dune: 3 copies in eu-west."


@pytest.mark.parametrize("kind", CLIENTS)
async def test_seed_001_a_fresh_modern_client_is_refused_once_relists_and_succeeds(kind: str) -> None:
    recorder = RecordingApp(app())
    async with serve_app(recorder) as url, any_client(kind, url, "2026-07-28") as client:
        recorder.exchanges.clear()
        result = await client.call_tool("stock_in_region", {"title": "Dune", "region": "eu-west"})
        assert text_of(result) == "Dune: 3 copies in eu-west."
        result = await client.call_tool("stock_in_region", {"title": "Dune", "region": "Zürich"})
        assert text_of(result) == "Dune: 3 copies in Zürich."
    assert recorder.exchanges == [
        ("tools/call", 400),
        ("tools/list", 200),
        ("tools/call", 200),
        ("tools/call", 200),
    ]
