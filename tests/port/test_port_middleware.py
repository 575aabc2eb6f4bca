"""Middleware written for the SDK (observing `ctx.method`, refusing with `MCPError`) ports unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import FLAVOURS, MODES, load, outcome, transcripts

pytestmark = pytest.mark.anyio


async def visit(client: Client) -> list[Any]:
    results = [await outcome(client.list_tools()), await outcome(client.call_tool("browse", {}))]
    return [result.get("content", result.get("tools", result)) for result in results]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_middleware_sees_and_refuses_alike(mode: str) -> None:
    for flavour in FLAVOURS:
        module = load("middleware_use", flavour)
        module.seen.clear()
        module.closed["now"] = False
    open_ = await transcripts("middleware_use", mode, visit)
    seen = {flavour: list(load("middleware_use", flavour).seen) for flavour in FLAVOURS}
    for flavour in FLAVOURS:
        load("middleware_use", flavour).closed["now"] = True
    closed = await transcripts("middleware_use", mode, lambda client: outcome(client.call_tool("browse", {})))
    assert open_["mcpdi"] == open_["sdk"]
    assert seen["mcpdi"] == seen["sdk"] == ["tools/list", "tools/call"]
    assert closed["mcpdi"] == closed["sdk"] == {"error": -32001, "message": "The shop is closed"}
