"""A round's cost is bounded: answers are checked when recorded, and state has a size limit."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import zlib
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

from mcpdi import Elicit, HmacCodec, InvalidRequestState, MCPServer, RequestStateSecurity, Resolve, Sample
from mcpdi._rounds import validated_payload
from mcpdi._state._codec import MAX_PAYLOAD_SIZE, StateTooLarge, pack_payload, unpack_payload
from mcpdi._state._security import CallBinding
from mcpdi.testing import InMemoryClient

from .conftest import connect

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
KEY = b"k" * 32
ADA = {"action": "accept", "content": {"name": "Ada"}}


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_llm() -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))
    return Sample([message], max_tokens=10)


def completion(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}


def two_questions() -> tuple[MCPServer, RequestStateSecurity]:
    security = RequestStateSecurity([KEY])
    mcp = MCPServer("Costs", request_state=security)

    @mcp.tool()
    def sample_then_name(
        reply: Annotated[CreateMessageResult, Resolve(ask_llm)], who: Annotated[Name, Resolve(ask_name)]
    ) -> str:
        return f"{who.name}: {reply.content}"

    return mcp, security


async def answer_only_the_sample(client: InMemoryClient, answer: Any) -> dict[str, Any]:
    first = (await client.send("tools/call", {"name": "sample_then_name", "arguments": {}}))["result"]
    sample_key = next(k for k, v in first["inputRequests"].items() if v["method"] == "sampling/createMessage")
    retry = {
        "name": "sample_then_name",
        "arguments": {},
        "inputResponses": {sample_key: answer},
        "requestState": first["requestState"],
    }
    return await client.send("tools/call", retry)


def recorded(security: RequestStateSecurity, token: str) -> list[Any]:
    inner = security.open(token, CallBinding.of("tools/call", "sample_then_name", {}, audience="Costs"))
    return [outcome["p"] for outcome in inner["outcomes"].values()]


async def test_an_answer_of_the_wrong_kind_ends_the_call_at_once_and_is_never_carried() -> None:
    mcp, _ = two_questions()
    padded_elicitation = {"action": "accept", "content": {"junk": "x" * 1000}}
    async with connect(mcp, MODERN) as client:
        second = (await answer_only_the_sample(client, padded_elicitation))["result"]

    assert "requestState" not in second
    assert second["isError"] is True
    assert second["content"][0]["text"] == snapshot(
        "Error executing tool sample_then_name: Resolver 'ask_llm' received a response of the wrong kind"
    )


async def test_an_answer_of_the_right_kind_is_recorded_in_its_validated_wire_form() -> None:
    mcp, security = two_questions()
    answer = completion("hi") | {"junk": "x" * 1000}
    async with connect(mcp, MODERN) as client:
        second = (await answer_only_the_sample(client, answer))["result"]

    assert recorded(security, second["requestState"]) == [completion("hi")]


async def test_a_huge_answer_ends_the_call_at_once_instead_of_riding_along_every_round() -> None:
    mcp, _ = two_questions()
    async with connect(mcp, MODERN) as client:
        response = await answer_only_the_sample(client, completion("a" * (MAX_PAYLOAD_SIZE + 1)))

    assert response["result"]["isError"] is True
    text = response["result"]["content"][0]["text"]
    size = int(text.split(" take ")[1].split(" bytes")[0])  # claims vary by a few bytes with the clock
    assert MAX_PAYLOAD_SIZE < size < MAX_PAYLOAD_SIZE + 1000
    assert text.replace(str(size), "N") == snapshot(
        "Error executing tool sample_then_name: the answers recorded for this call take N bytes, over the limit of 1048576 for a requestState; ask for less per question (a smaller max_tokens for Sample)"
    )


def test_a_payload_is_never_inflated_past_one_mebibyte() -> None:
    bomb = b"\x02" + zlib.compress(b'{"s":"' + b"a" * MAX_PAYLOAD_SIZE + b'"}', 9)
    token = HmacCodec([KEY]).seal(bomb)

    assert len(token) < 4096
    with pytest.raises(InvalidRequestState) as caught:
        RequestStateSecurity([KEY]).open(token, CallBinding.of("tools/call", "t", {}, audience="a"))
    assert caught.value.reason == snapshot("payload decompresses to more than 1048576 bytes")
    with pytest.raises(InvalidRequestState):
        unpack_payload(bomb)


def test_packing_refuses_a_payload_over_the_limit_with_its_size() -> None:
    with pytest.raises(StateTooLarge) as caught:
        pack_payload({"s": "a" * 100}, max_size=50)

    assert (caught.value.size, caught.value.limit, str(caught.value)) == snapshot(
        (108, 50, "requestState payload is 108 bytes, over the limit of 50")
    )


def test_what_is_recorded_for_each_kind_of_response() -> None:
    elicited = {"action": "accept", "content": {"name": "Ada"}}
    roots = {"roots": [{"uri": "file:///tmp"}]}

    assert validated_payload("elicitation/create", elicited | {"extra": 1}) == elicited
    assert validated_payload("elicitation/create", ElicitResult.model_validate(elicited)) == elicited
    assert validated_payload("elicitation/create", roots) is None
    assert validated_payload("elicitation/create", ListRootsResult.model_validate(roots)) is None
    assert validated_payload("roots/list", roots) == roots
    assert validated_payload("sampling/createMessage", completion("hi")) == completion("hi")
    assert validated_payload("sampling/createMessage", 12345) is None
    assert validated_payload("tasks/other", {"kept": True}) == {"kept": True}
