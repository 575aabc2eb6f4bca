"""2026-07-28 rounds: sealed requestState, which answers count, and what is refused."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve
from mcpdi.testing import InMemoryClient

from .conftest import answers, connect

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
KEY = b"k" * 32


class Name(BaseModel):
    name: str


class Ship(BaseModel):
    ship: bool


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_ship() -> Elicit[Ship]:
    return Elicit("Ship it?", Ship)


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def server(security: RequestStateSecurity | None = None) -> MCPServer:
    mcp = MCPServer("State", request_state=security or RequestStateSecurity([KEY]))

    @mcp.tool()
    def greet(greeting: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"{greeting}, {who.name}!"

    @mcp.tool()
    def greet_too(greeting: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"{greeting}, {who.name}!"

    @mcp.tool()
    def send(who: Annotated[Name, Resolve(ask_name)], ship: Annotated[Ship, Resolve(ask_ship)]) -> str:
        return f"{who.name}: {ship.ship}"

    return mcp


async def first_round(client: InMemoryClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = await client.send("tools/call", {"name": name, "arguments": arguments})
    result = response["result"]
    assert result["resultType"] == "input_required"
    return result


ADA = {"action": "accept", "content": {"name": "Ada"}}
INVALID_STATE = snapshot(
    {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }
)


async def test_a_question_round_returns_input_requests_and_a_sealed_state() -> None:
    async with connect(server(), MODERN) as client:
        result = await first_round(client, "greet", {"greeting": "Hello"})
        (key,) = result["inputRequests"]
        assert result["inputRequests"][key] == {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "properties": {"name": {"title": "Name", "type": "string"}},
                    "required": ["name"],
                    "type": "object",
                },
            },
        }
        assert result["requestState"].startswith("v1.")
        assert "ask_name" not in key  # keys do not leak code structure
        retry = {
            "name": "greet",
            "arguments": {"greeting": "Hello"},
            "inputResponses": {key: ADA},
            "requestState": result["requestState"],
        }
        done = await client.send("tools/call", retry)
    assert done["result"]["content"][0]["text"] == "Hello, Ada!"
    assert done["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    "change",
    ["tampered", "garbage", "other_tool", "other_arguments", "other_key", "expired"],
)
async def test_a_state_that_does_not_belong_to_the_call_is_refused(change: str) -> None:
    clock = Clock()
    mcp = server(RequestStateSecurity([KEY], clock=clock, ttl=60))
    async with connect(mcp, MODERN) as client:
        result = await first_round(client, "greet", {"greeting": "Hello"})
        (key,) = result["inputRequests"]
        token: str = result["requestState"]
        name, arguments = "greet", {"greeting": "Hello"}
        if change == "tampered":
            token = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
        elif change == "garbage":
            token = "not a token"
        elif change == "other_tool":
            name = "greet_too"
        elif change == "other_arguments":
            arguments = {"greeting": "Bye"}
        elif change == "other_key":
            async with connect(server(RequestStateSecurity([b"z" * 32])), MODERN) as other:
                token = (await first_round(other, "greet", {"greeting": "Hello"}))["requestState"]
        else:
            clock.now += 61
        retry = {"name": name, "arguments": arguments, "inputResponses": {key: ADA}, "requestState": token}
        response = await client.send("tools/call", retry)
    assert response["error"] == INVALID_STATE


async def test_independent_questions_are_asked_together_and_partial_answers_kept() -> None:
    async with connect(server(), MODERN) as client:
        result = await first_round(client, "send", {})
        name_key, ship_key = result["inputRequests"]
        partial = await client.send(
            "tools/call",
            {
                "name": "send",
                "arguments": {},
                "inputResponses": {name_key: ADA},
                "requestState": result["requestState"],
            },
        )
        assert list(partial["result"]["inputRequests"]) == [ship_key]
        # The recorded name wins over a different name sent again.
        mallory = {"action": "accept", "content": {"name": "Mallory"}}
        done = await client.send(
            "tools/call",
            {
                "name": "send",
                "arguments": {},
                "inputResponses": {
                    name_key: mallory,
                    ship_key: {"action": "accept", "content": {"ship": False}},
                },
                "requestState": partial["result"]["requestState"],
            },
        )
    assert done["result"]["content"][0]["text"] == "Ada: False"


async def test_a_question_that_changes_every_round_ends_with_an_explanation() -> None:
    mcp = MCPServer("State")
    counter = iter(range(100))

    def restless() -> Elicit[Name]:
        return Elicit(f"Question {next(counter)}?", Name)

    @mcp.tool()
    def fidget(who: Annotated[Name, Resolve(restless)]) -> str:
        return who.name

    async with connect(mcp, MODERN, script=answers(elicit=ADA)) as client:
        call = await client.call_tool("fidget", {}, max_rounds=20)
    assert call.rounds == 10
    assert call.result["isError"] is True
    assert call.text == snapshot(
        "Error executing tool fidget: Resolver 'restless' asked a different question in each of 9 rounds, so no answer can ever match; build the question only from the tool's arguments and earlier answers (no clocks or counters)"
    )


async def test_identical_questions_from_two_resolvers_are_asked_once(protocol_version: str) -> None:
    mcp = MCPServer("State")

    def first() -> Elicit[Name]:
        return Elicit("What is your name?", Name)

    def second() -> Elicit[Name]:
        return Elicit("What is your name?", Name)

    @mcp.tool()
    def twice(a: Annotated[Name, Resolve(first)], b: Annotated[Name, Resolve(second)]) -> str:
        return f"{a.name}/{b.name}"

    async with connect(mcp, protocol_version, script=answers(elicit=ADA)) as client:
        call = await client.call_tool("twice", {})
    assert call.text == "Ada/Ada"
    assert len(call.asked) == 1


@pytest.mark.parametrize(
    "retry",
    ["answers-without-a-state", "a-state-without-answers", "an-answer-under-an-unknown-key"],
)
async def test_a_retry_without_usable_answers_is_asked_the_question_again(retry: str) -> None:
    async with connect(server(), MODERN) as client:
        result = await first_round(client, "greet", {"greeting": "Hello"})
        (key,) = result["inputRequests"]
        again: dict[str, Any] = {"name": "greet", "arguments": {"greeting": "Hello"}}
        if retry == "answers-without-a-state":
            again["inputResponses"] = {key: ADA}
        elif retry == "a-state-without-answers":
            again["requestState"] = result["requestState"]
        else:
            again["inputResponses"] = {"someone-else": ADA}
            again["requestState"] = result["requestState"]
        response = await client.send("tools/call", again)
    assert response["result"]["resultType"] == "input_required"
    assert list(response["result"]["inputRequests"]) == [key]


async def test_a_state_that_would_be_too_large_fails_the_call_with_advice() -> None:
    mcp = MCPServer("State", request_state=RequestStateSecurity([KEY], max_token_size=400))

    def ask_twice(who: Annotated[Name, Resolve(ask_name)]) -> Elicit[Ship]:
        return Elicit(f"Ship to {who.name}?", Ship)

    @mcp.tool()
    def big(ship: Annotated[Ship, Resolve(ask_twice)]) -> str:
        return str(ship.ship)

    long_name = {"action": "accept", "content": {"name": "A" * 500}}
    async with connect(mcp, MODERN, script=answers(elicit=long_name)) as client:
        call = await client.call_tool("big", {})
    assert call.result["isError"] is True
    assert call.text.startswith(
        "Error executing tool big: the answers recorded for this call need a requestState of "
    )
    assert call.text.endswith(
        "characters, over the limit of 400; ask for less per question (a smaller max_tokens for Sample), or raise RequestStateSecurity(max_token_size=...)"
    )
