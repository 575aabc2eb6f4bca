"""Every client door runs the same round loop: `MCPServer.call_tool`, `ScriptedClient` and `Client` over HTTP.

One tool asks two questions in its first round and one that depends on both in its second;
each door answers the same way, reads the same result, and gives up at the same cap with the
same `RoundLimitExceeded`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

import mcp_types as types
import pytest
from inline_snapshot import snapshot
from interop_servers import serve_app
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve, RoundLimitExceeded
from mcpdi.testing import AskedQuestion, Reply, ScriptedClient, accept
from mcpdi_transport import Client, ClientRequestContext

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ANSWERS: dict[str, dict[str, Any]] = {
    "Your name?": {"word": "Ada"},
    "Your city?": {"word": "Paris"},
    "Send it to Ada in Paris?": {"word": "yes"},
}


def ask_name() -> Elicit[Word]:
    return Elicit("Your name?", Word)


def ask_city() -> Elicit[Word]:
    return Elicit("Your city?", Word)


def confirm(
    who: Annotated[Word, Resolve(ask_name)], where: Annotated[Word, Resolve(ask_city)]
) -> Elicit[Word]:
    return Elicit(f"Send it to {who.word} in {where.word}?", Word)


class Word(BaseModel):
    word: str


def card_server() -> MCPServer[Any]:
    mcp = MCPServer("Cards")

    @mcp.tool()
    def send_card(where: Annotated[Word, Resolve(ask_city)], sure: Annotated[Word, Resolve(confirm)]) -> str:
        return f"card to {where.word}: {sure.word}"

    return mcp


Door = Callable[[MCPServer[Any], int, list[str]], Awaitable[str]]
"""Call `send_card` through one door with a round cap, recording the questions' messages: the text."""


async def through_call_tool(mcp: MCPServer[Any], max_rounds: int, asked: list[str]) -> str:
    def answer(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        assert params is not None
        asked.append(params["message"])
        return {"action": "accept", "content": ANSWERS[params["message"]]}

    async with mcp:
        result = await mcp.call_tool("send_card", {}, answers=answer, max_rounds=max_rounds)
    assert isinstance(result.content[0], types.TextContent)
    return result.content[0].text


async def through_scripted_client(mcp: MCPServer[Any], max_rounds: int, asked: list[str]) -> str:
    def reply(question: AskedQuestion) -> Reply:
        assert question.message is not None
        asked.append(question.message)
        return accept(**ANSWERS[question.message])

    client = ScriptedClient(mcp, max_rounds=max_rounds).answer_when(lambda question: True, reply)
    async with mcp:
        result = await client.call_tool("send_card", {})
    assert isinstance(result.content[0], types.TextContent)
    return result.content[0].text


async def through_http_client(mcp: MCPServer[Any], max_rounds: int, asked: list[str]) -> str:
    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params.message)
        return types.ElicitResult(action="accept", content=ANSWERS[params.message])

    outcome: types.CallToolResult | RoundLimitExceeded
    async with (
        serve_app(mcp.streamable_http_app()) as url,
        Client(url, mode=MODERN, elicitation_callback=elicit, max_rounds=max_rounds) as client,
    ):
        try:
            outcome = await client.call_tool("send_card", {})
        except RoundLimitExceeded as error:  # raised here, past the server's task group, unwrapped
            outcome = error
    if isinstance(outcome, RoundLimitExceeded):
        raise outcome
    assert isinstance(outcome.content[0], types.TextContent)
    return outcome.content[0].text


DOORS: dict[str, Door] = {
    "MCPServer.call_tool": through_call_tool,
    "ScriptedClient": through_scripted_client,
    "Client over HTTP": through_http_client,
}


@pytest.mark.parametrize("door", list(DOORS))
async def test_every_door_answers_the_same_rounds_and_reads_the_same_result(door: str) -> None:
    asked: list[str] = []
    text = await DOORS[door](card_server(), 2, asked)
    assert text == "card to Paris: yes"
    first_round, second_round = sorted(asked[:2]), asked[2:]
    assert (first_round, second_round) == (["Your city?", "Your name?"], ["Send it to Ada in Paris?"])


@pytest.mark.parametrize("door", list(DOORS))
async def test_every_door_gives_up_at_the_same_cap_with_the_same_error(door: str) -> None:
    asked: list[str] = []
    with pytest.raises(RoundLimitExceeded) as caught:
        await DOORS[door](card_server(), 1, asked)
    assert (caught.value.what, caught.value.max_rounds) == ("tools/call 'send_card'", 1)
    assert str(caught.value) == snapshot(
        "tools/call 'send_card' still asked for input after 1 rounds; "
        "pass max_rounds=N with N > 1 if it legitimately needs more"
    )
    assert sorted(asked) == ["Your city?", "Your name?"]  # the first round was answered, the second not
