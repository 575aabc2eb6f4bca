"""The 2026-07-28 multi-round loop: questions go to the callbacks, state comes back untouched."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from client_fakes import ScriptedChannel, discovered, scripted_client
from inline_snapshot import snapshot

from mcpdi import MCPError
from mcpdi_transport import RoundLimitExceeded
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio

STATE = "v1.opaque+/=state \u00e9 with bytes that must come back exactly"
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
SAMPLE: dict[str, Any] = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
ROOTS = {"method": "roots/list"}


async def name(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert context.era == "modern"
    return types.ElicitResult(action="accept", content={"name": f"Ada via {context.request_id}"})


async def llm(context: RequestContext, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    text = types.TextContent(type="text", text="hi")
    return types.CreateMessageResult(role="assistant", content=text, model="m")


async def roots(context: RequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root.model_validate({"uri": "file:///p"})])


def asking_server(*rounds: dict[str, Any]) -> ScriptedChannel:
    """tools/call answers each of `rounds` in turn, then DONE."""
    answers = iter(rounds)

    async def call(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return next(answers, DONE)

    return ScriptedChannel({"server/discover": discovered, "tools/call": call})


async def test_every_question_of_a_round_is_answered_and_the_state_echoed_exactly() -> None:
    channel = asking_server(
        {
            "resultType": "input_required",
            "inputRequests": {"a": ELICIT, "b": SAMPLE, "c": ROOTS},
            "requestState": STATE,
        }
    )
    callbacks: dict[str, Any] = {
        "elicitation_callback": name,
        "sampling_callback": llm,
        "list_roots_callback": roots,
    }
    async with scripted_client(channel, **callbacks) as client:
        result = await client.call_tool("greet", {"x": 1})
    assert result.content == [types.TextContent(type="text", text="done")]
    first, retry = channel.sent[1], channel.sent[2]
    assert retry.message["id"] != first.message["id"]
    assert retry.params["name"] == "greet"
    assert retry.params["arguments"] == {"x": 1}
    assert retry.params["requestState"] == STATE
    assert retry.params["inputResponses"] == {
        "a": {"action": "accept", "content": {"name": "Ada via a"}},
        "b": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "c": {"roots": [{"uri": "file:///p"}]},
    }


async def test_a_round_without_state_sends_no_state_back() -> None:
    channel = asking_server({"resultType": "input_required", "inputRequests": {"a": ELICIT}})
    async with scripted_client(channel, elicitation_callback=name) as client:
        await client.call_tool("greet")
    assert "requestState" not in channel.sent[2].params
    assert "arguments" not in channel.sent[2].params


async def test_a_state_only_round_is_retried_with_the_state_alone() -> None:
    channel = asking_server({"resultType": "input_required", "requestState": "s1"})
    with anyio.fail_after(5):
        async with scripted_client(channel) as client:
            await client.call_tool("busy")
    assert channel.sent[2].params == {
        "name": "busy",
        "requestState": "s1",
        "_meta": channel.sent[2].params["_meta"],
    }


async def test_prompts_and_resources_run_the_same_rounds() -> None:
    asked: dict[str, Any] = {
        "resultType": "input_required",
        "inputRequests": {"a": ELICIT},
        "requestState": "s",
    }
    prompt: dict[str, Any] = {"resultType": "complete", "messages": []}
    read: dict[str, Any] = {"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "private"}
    answers: Iterator[dict[str, Any]] = iter([asked, prompt, asked])

    async def reply(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        return next(answers, read)

    channel = ScriptedChannel({"server/discover": discovered, "prompts/get": reply, "resources/read": reply})
    async with scripted_client(channel, elicitation_callback=name) as client:
        await client.get_prompt("p")
        await client.read_resource("memo://x")
    assert [s.method for s in channel.sent[1:]] == ["prompts/get"] * 2 + ["resources/read"] * 2
    assert channel.sent[4].headers["mcp-name"] == "memo://x"
    assert channel.sent[4].params["inputResponses"] == {
        "a": {"action": "accept", "content": {"name": "Ada via a"}}
    }


async def test_a_server_that_keeps_asking_hits_the_round_cap() -> None:
    forever = {"resultType": "input_required", "inputRequests": {"a": ELICIT}, "requestState": "s"}
    channel = asking_server(*[forever] * 5)
    async with scripted_client(channel, elicitation_callback=name, max_rounds=3) as client:
        with pytest.raises(RoundLimitExceeded) as caught:
            await client.call_tool("greet")
    assert str(caught.value) == snapshot(
        "tools/call 'greet' still asked for input after 3 rounds; pass max_rounds=N with N > 3 "
        "if it legitimately needs more"
    )
    assert channel.methods().count("tools/call") == 4


async def test_a_callback_answering_an_error_ends_the_call_with_that_error() -> None:
    async def refuse(context: RequestContext, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=-1, message="the person is away")

    channel = asking_server({"resultType": "input_required", "inputRequests": {"a": ELICIT, "b": ELICIT}})
    async with scripted_client(channel, elicitation_callback=refuse) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("greet")
    assert (caught.value.code, caught.value.message) == (-1, "the person is away")
    assert channel.methods().count("tools/call") == 1


async def test_a_question_without_a_callback_ends_the_call() -> None:
    channel = asking_server({"resultType": "input_required", "inputRequests": {"a": SAMPLE}})
    async with scripted_client(channel) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("greet")
    assert caught.value.message == snapshot(
        "This client cannot answer 'sampling/createMessage': it was not given a callback for it"
    )


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            {"resultType": "task"},
            "tools/call 'greet' answered with resultType 'task', which this client does not know",
        ),
        (
            {"resultType": "input_required"},
            "tools/call 'greet' answered input_required with neither inputRequests nor requestState",
        ),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"params": {}}}},
            "tools/call 'greet' sent input request 'a' without a method",
        ),
    ],
)
async def test_a_malformed_round_is_refused(result: dict[str, Any], message: str) -> None:
    channel = asking_server(result)
    async with scripted_client(channel, elicitation_callback=name) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("greet")
    assert caught.value.message == message
