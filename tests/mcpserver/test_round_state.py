"""The sealed round state is one typed record: what it reads back, and what it refuses."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve
from mcpdi._state._round import AskedQuestion, BodyState, Outcome, RoundState
from mcpdi._state._security import CallBinding, InvalidRequestState

from .conftest import connect

MODERN = "2026-07-28"
KEY = b"k" * 32
INVALID_STATE = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def test_a_round_state_reads_back_what_it_dumped() -> None:
    state = RoundState(
        outcomes={"r1": Outcome("d1", {"action": "accept", "content": {"name": "Ada"}})},
        asked={"r2": AskedQuestion("d2", "elicitation/create")},
        churn={"r2": 3},
    )

    assert state.dump() == snapshot(
        {
            "v": 1,
            "outcomes": {"r1": {"q": "d1", "p": {"action": "accept", "content": {"name": "Ada"}}}},
            "asked": {"r2": {"q": "d2", "m": "elicitation/create"}},
            "churn": {"r2": 3},
        }
    )
    assert RoundState.parse(state.dump()) == state
    assert RoundState.parse(RoundState().dump()) == RoundState()
    assert "churn" not in RoundState().dump()


def test_a_body_state_reads_back_what_it_dumped() -> None:
    assert BodyState.parse(BodyState("step 2").dump()) == BodyState("step 2")


GOOD: dict[str, Any] = {"v": 1, "outcomes": {}, "asked": {}}
MALFORMED: dict[str, dict[str, Any]] = {
    "other version": GOOD | {"v": 2},
    "no version": {"outcomes": {}, "asked": {}},
    "unknown field": GOOD | {"extra": 1},
    "outcomes as a list": GOOD | {"outcomes": []},
    "outcome as a string": GOOD | {"outcomes": {"r1": "yes"}},
    "outcome without digest": GOOD | {"outcomes": {"r1": {"p": {}}}},
    "outcome with numeric digest": GOOD | {"outcomes": {"r1": {"q": 1, "p": {}}}},
    "outcome with extra field": GOOD | {"outcomes": {"r1": {"q": "d", "p": {}, "x": 0}}},
    "asked as a string": GOOD | {"asked": "r1"},
    "asked question not an object": GOOD | {"asked": {"r1": "d"}},
    "asked digest not a string": GOOD | {"asked": {"r1": {"q": None, "m": "roots/list"}}},
    "asked without method": GOOD | {"asked": {"r1": {"q": "d"}}},
    "asked with extra field": GOOD | {"asked": {"r1": {"q": "d", "m": "roots/list", "x": 1}}},
    "churn as a list": GOOD | {"churn": [1]},
    "churn not a count": GOOD | {"churn": {"r1": "many"}},
    "churn negative": GOOD | {"churn": {"r1": -1}},
    "churn boolean": GOOD | {"churn": {"r1": True}},
    "a body state": {"v": 1, "body": "text"},
}


def test_malformed_round_states_are_refused_with_what_is_wrong() -> None:
    reasons: dict[str, str] = {}
    for name, inner in MALFORMED.items():
        with pytest.raises(InvalidRequestState) as caught:
            RoundState.parse(inner)
        reasons[name] = caught.value.reason

    assert reasons == snapshot(
        {
            "other version": "round state version is 2, not 1",
            "no version": "round state version is None, not 1",
            "unknown field": "round state has unknown fields ['extra']",
            "outcomes as a list": "round state 'outcomes' is list, not an object",
            "outcome as a string": "outcome 'r1' is str, not an object",
            "outcome without digest": "outcome 'r1' is not exactly a digest 'q' and a payload 'p'",
            "outcome with numeric digest": "outcome 'r1' is not exactly a digest 'q' and a payload 'p'",
            "outcome with extra field": "outcome 'r1' is not exactly a digest 'q' and a payload 'p'",
            "asked as a string": "round state 'asked' is str, not an object",
            "asked question not an object": "asked question 'r1' is str, not an object",
            "asked digest not a string": "asked question 'r1' is not exactly a digest 'q' and a method 'm'",
            "asked without method": "asked question 'r1' is not exactly a digest 'q' and a method 'm'",
            "asked with extra field": "asked question 'r1' is not exactly a digest 'q' and a method 'm'",
            "churn as a list": "round state 'churn' is list, not an object",
            "churn not a count": "churn count for 'r1' is 'many', not a count",
            "churn negative": "churn count for 'r1' is -1, not a count",
            "churn boolean": "churn count for 'r1' is True, not a count",
            "a body state": "round state has unknown fields ['body']",
        }
    )


def test_malformed_body_states_are_refused() -> None:
    reasons: list[str] = []
    for inner in ({"v": 1, "body": 5}, {"v": 1}, GOOD, {"v": 0, "body": "x"}):
        with pytest.raises(InvalidRequestState) as caught:
            BodyState.parse(inner)
        reasons.append(caught.value.reason)

    assert reasons == snapshot(
        [
            "the token was not sealed for a tool that drives its own rounds",
            "the token was not sealed for a tool that drives its own rounds",
            "body state has unknown fields ['asked', 'outcomes']",
            "body state version is 0, not 1",
        ]
    )


def greeter() -> tuple[MCPServer, RequestStateSecurity]:
    security = RequestStateSecurity([KEY])
    mcp = MCPServer("State", request_state=security)

    @mcp.tool()
    def greet(greeting: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"{greeting}, {who.name}!"

    return mcp, security


@pytest.mark.anyio
@pytest.mark.parametrize("case", sorted(MALFORMED))
async def test_a_well_sealed_but_malformed_round_state_gets_the_fixed_rejection(case: str) -> None:
    mcp, security = greeter()
    arguments = {"greeting": "Hello"}
    token = security.seal(CallBinding.of("tools/call", "greet", arguments, audience="State"), MALFORMED[case])

    async with connect(mcp, MODERN) as client:
        response = await client.send(
            "tools/call", {"name": "greet", "arguments": arguments, "requestState": token}
        )

    assert response["error"] == INVALID_STATE
