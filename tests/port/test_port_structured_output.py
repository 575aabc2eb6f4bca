"""Structured output: every return kind publishes the same `outputSchema` and `structuredContent`."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import MODES, load, outcome, transcripts

pytestmark = pytest.mark.anyio

TOOLS = sorted(tool.name for tool in load("structured", "sdk").mcp._tool_manager.list_tools())  # pyright: ignore[reportPrivateUsage]


async def every_tool(client: Client) -> dict[str, Any]:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    return {
        name: {"outputSchema": listed[name].output_schema, "call": await outcome(client.call_tool(name, {}))}
        for name in TOOLS
    }


@pytest.mark.parametrize("mode", MODES)
async def test_every_return_kind_is_published_and_returned_as_the_sdk_does(mode: str) -> None:
    seen = await transcripts("structured", mode, every_tool)
    assert seen["mcpdi"] == seen["sdk"]
    # Not vacuous: the kinds that changed when porting are there, structured as the SDK sends them.
    assert seen["mcpdi"]["dataclass"]["call"]["structuredContent"] == {"x": 2, "y": 0}
    assert seen["mcpdi"]["typed_dict"]["outputSchema"]["title"] == "Totals"
    assert seen["mcpdi"]["annotated_class"]["call"]["structuredContent"] == {"label": "box", "size": 1}
    assert seen["mcpdi"]["opaque"]["outputSchema"] is None


async def test_a_stdlib_typeddict_return_registers_on_python_3_11() -> None:
    mcp = load("structured", "mcpdi").mcp
    tool = next(tool for tool in await mcp.list_tools() if tool.name == "typed_dict")
    assert tool.output_schema == {
        "description": "Order totals.",
        "properties": {
            "net": {"title": "Net", "type": "integer"},
            "currency": {"title": "Currency", "type": "string"},
        },
        "required": ["net", "currency"],
        "title": "Totals",
        "type": "object",
    }
