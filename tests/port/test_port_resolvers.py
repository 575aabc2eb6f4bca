"""Asking resolvers in a ported server: a `create_model` form and an outcome the tool branches on."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from port_harness import MODES, outcome, transcripts

pytestmark = pytest.mark.anyio


def answering(confirm_action: str, asked: list[Any]) -> Any:
    async def on_elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True, exclude={"meta"}))  # not trace ids
        if params.message == "Which seat?":
            return mcp_types.ElicitResult(action="accept", content={"row": 12, "window": True})
        if confirm_action == "accept":
            return mcp_types.ElicitResult(action="accept", content={"ok": True})
        return mcp_types.ElicitResult(action=confirm_action)  # pyright: ignore[reportArgumentType]

    return on_elicit


async def booking(client: Client) -> Any:
    result = await outcome(client.call_tool("book", {"flight": "LH123"}))
    return result["content"][0]["text"] if "content" in result else result


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "expected"), [("accept", "LH123: row 12, window=True"), ("decline", "not booked (decline)")]
)
async def test_resolvers_ask_the_same_questions_and_book_the_same_seat(
    mode: str, action: str, expected: str
) -> None:
    asked: list[Any] = []
    seen = await transcripts("resolvers", mode, booking, elicitation_callback=answering(action, asked))
    assert seen["mcpdi"] == seen["sdk"] == expected
    half = len(asked) // 2
    assert asked[:half] == asked[half:]
    assert asked[0]["requestedSchema"]["properties"]["row"] == {"title": "Row", "type": "integer"}
