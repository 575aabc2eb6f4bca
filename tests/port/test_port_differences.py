"""Where a ported server answers differently on purpose: each difference pinned on both sides.

mcpdi keeps the spec's error codes where the SDK reports a protocol error as a tool result
or with code 0, and labels bytes as `application/octet-stream` rather than `text/plain`.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import MODES, outcome, transcripts

pytestmark = pytest.mark.anyio


async def requests(client: Client) -> dict[str, Any]:
    return {
        "unknown tool": await outcome(client.call_tool("nope", {})),
        "unknown prompt": await outcome(client.get_prompt("nope", {})),
        "missing prompt argument": await outcome(client.get_prompt("greet", {})),
        "crashing prompt": await outcome(client.get_prompt("broken", {})),
        "bytes resource": await outcome(client.read_resource("diff://raw")),
        "crashing template": await outcome(client.read_resource("diff://items/x")),
        "crashing resource": await outcome(client.read_resource("diff://fixed")),
    }


@pytest.fixture(params=MODES)
async def seen(request: pytest.FixtureRequest) -> dict[Any, Any]:
    return await transcripts("differences", request.param, requests)


async def test_an_unknown_tool_is_a_protocol_error_not_a_tool_result(seen: dict[str, Any]) -> None:
    assert seen["sdk"]["unknown tool"]["isError"] is True
    assert seen["sdk"]["unknown tool"]["content"][0]["text"] == "Unknown tool: nope"
    assert seen["mcpdi"]["unknown tool"] == {"error": -32602, "message": "Unknown tool: nope"}


async def test_prompt_errors_carry_invalid_params_and_their_text(seen: dict[str, Any]) -> None:
    assert seen["sdk"]["unknown prompt"]["error"] in (0, -32603)
    assert seen["mcpdi"]["unknown prompt"] == {"error": -32602, "message": "Unknown prompt: nope"}
    assert seen["mcpdi"]["missing prompt argument"] == {
        "error": -32602,
        "message": "Missing required arguments for prompt 'greet': name",
    }
    assert seen["mcpdi"]["crashing prompt"] == {"error": -32603, "message": "Error rendering prompt broken"}


async def test_bytes_without_a_mime_type_are_labelled_octet_stream(seen: dict[str, Any]) -> None:
    (sdk,) = seen["sdk"]["bytes resource"]["contents"]
    (ours,) = seen["mcpdi"]["bytes resource"]["contents"]
    assert (sdk["mimeType"], ours["mimeType"]) == ("text/plain", "application/octet-stream")
    assert sdk["blob"] == ours["blob"] == "AAE="


async def test_a_crashing_resource_is_reported_with_the_sdk_wording(seen: dict[str, Any]) -> None:
    for name in ("crashing template", "crashing resource"):
        assert seen["mcpdi"][name] == seen["sdk"][name]
    assert (
        seen["mcpdi"]["crashing template"]["message"]
        == "Error creating resource from template diff://items/x"
    )
