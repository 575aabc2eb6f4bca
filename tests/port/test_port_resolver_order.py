"""The author's order in a ported server: checks run before the question, effects after its answer."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp.client import ClientRequestContext
from port_harness import FLAVOURS, MODES, Flavour, connect, load, outcome

pytestmark = pytest.mark.anyio


def answering(action: str, events: list[str]) -> Any:
    async def on_elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        events.append(f"asked {params.message}")
        if params.message == "Which row?":
            return mcp_types.ElicitResult(action="accept", content={"row": 12})
        if params.message == "Which meal?":
            return mcp_types.ElicitResult(action="accept", content={"meal": "pasta"})
        if action == "accept":
            return mcp_types.ElicitResult(action="accept", content={"ok": True})
        return mcp_types.ElicitResult(action="decline")

    return on_elicit


async def call(
    flavour: Flavour, mode: str, name: str, arguments: dict[str, Any], action: str, **options: Any
) -> Any:
    """The tool's result text (or error) and what the resolvers and the person saw, in order."""
    module = load("resolver_order", flavour)
    events: list[str] = module.EVENTS
    events.clear()
    async with connect(
        flavour, module.mcp, mode, elicitation_callback=answering(action, events), **options
    ) as client:
        result = await outcome(client.call_tool(name, arguments))
    text = result["content"][0]["text"] if "content" in result else result
    return text, list(events)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_refusing_check_ends_the_call_before_the_person_is_asked(flavour: Flavour, mode: str) -> None:
    text, events = await call(flavour, mode, "order", {"title": "Emma"}, "accept")
    assert text == "Error executing tool order: Emma is out of stock"
    assert events == ["check Emma"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_passing_check_runs_before_the_question(flavour: Flavour, mode: str) -> None:
    text, events = await call(flavour, mode, "order", {"title": "Dune"}, "accept")
    assert text == "ordered Dune (3 in stock)"
    assert events[:2] == ["check Dune", "asked Order Dune?"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_charge_after_the_question_waits_for_the_answer(mode: str, action: str) -> None:
    text, events = await call("mcpdi", mode, "pay", {"title": "Dune"}, action)
    charges = [event for event in events if event.startswith("charge")]
    assert charges == (["charge Dune"] if action == "accept" else [])
    assert events[0] == "asked Order Dune?"
    sdk_text, sdk_events = await call("sdk", mode, "pay", {"title": "Dune"}, action)
    assert sdk_text == text
    sdk_charges = [event for event in sdk_events if event.startswith("charge")]
    if mode == "legacy":  # the SDK asks mid-call too: the same order
        assert sdk_events == events
    else:  # the SDK runs every resolver of a round, the charge too, while the question is out
        assert sdk_charges == (["charge Dune", "charge Dune"] if action == "accept" else ["charge Dune"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_two_independent_questions_are_put_in_one_round(flavour: Flavour, mode: str) -> None:
    text, events = await call(flavour, mode, "board", {}, "accept", input_required_max_rounds=1)
    assert text == "row 12, pasta"
    assert sorted(events) == ["asked Which meal?", "asked Which row?"]
