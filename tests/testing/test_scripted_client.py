"""`ScriptedClient`: real in-memory calls whose questions are answered by rules, in both eras."""
# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcpdi.testing import (
    AskedQuestion,
    ScriptedClient,
    UnexpectedQuestion,
    accept,
    cancel,
    decline,
    roots,
    sampled,
)
from mcpdi.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

pytestmark = pytest.mark.anyio


class Shipping(BaseModel):
    express: bool


def pick_shipping(title: str) -> Elicit[Shipping]:
    return Elicit(f"Ship {title} express?", Shipping)


def write_note(shipping: Annotated[Shipping, Resolve(pick_shipping)]) -> Sample:
    prompt = f"Write a gift note (express={shipping.express})"
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=50
    )


def find_folder(note: Annotated[CreateMessageResult, Resolve(write_note)]) -> ListRoots:
    return ListRoots()


def server() -> MCPServer:
    mcp = MCPServer("Gifts")

    @mcp.tool()
    def send_gift(
        title: str,
        shipping: Annotated[Shipping, Resolve(pick_shipping)],
        note: Annotated[CreateMessageResult, Resolve(write_note)],
        folder: Annotated[ListRootsResult, Resolve(find_folder)],
    ) -> str:
        text = getattr(note.content, "text", "")
        return f"{title}: express={shipping.express}, note={text!r}, into {folder.roots[0].uri}"

    return mcp


async def test_a_three_round_call_asks_its_questions_in_order(protocol_version: str) -> None:
    client = (
        ScriptedClient(server(), protocol_version=protocol_version)
        .answer(pick_shipping, accept(express=True))
        .answer(write_note, sampled("Enjoy!"))
        .answer_when(lambda question: question.method == "roots/list", roots("file:///gifts"))
    )
    result = await client.call_tool("send_gift", {"title": "Dune"})
    assert result.structured_content == {"result": "Dune: express=True, note='Enjoy!', into file:///gifts"}
    assert [(q.method, q.resolver, q.round) for q in client.questions] == [
        ("elicitation/create", pick_shipping, 1),
        ("sampling/createMessage", write_note, 2),
        ("roots/list", find_folder, 3),
    ]
    assert client.questions[0].message == "Ship Dune express?"
    assert client.rounds == 3
    assert client.requests == (4 if protocol_version == "2026-07-28" else 1)


async def test_an_unexpected_question_fails_showing_the_question(protocol_version: str) -> None:
    client = ScriptedClient(server(), protocol_version=protocol_version).answer(write_note, sampled("Enjoy!"))
    with pytest.raises(UnexpectedQuestion) as caught:
        await client.call_tool("send_gift", {"title": "Dune"})
    assert str(caught.value) == snapshot(
        "tool 'send_gift' asked elicitation/create from pick_shipping in round 1: 'Ship Dune express?'; no rule of the script answers it (rules: resolver 'write_note'). Add .answer(resolver, reply) or .answer_when(predicate, reply)."
    )


@pytest.mark.parametrize("refusal", [decline(), cancel()], ids=["decline", "cancel"])
async def test_a_refused_form_ends_the_call_with_an_error_result(protocol_version: str, refusal: Any) -> None:
    client = ScriptedClient(server(), protocol_version=protocol_version).answer(pick_shipping, refusal)
    result = await client.call_tool("send_gift", {"title": "Dune"})
    assert result.is_error
    assert [q.resolver for q in client.questions] == [pick_shipping]


async def test_a_reply_of_the_wrong_kind_names_both_kinds(protocol_version: str) -> None:
    client = ScriptedClient(server(), protocol_version=protocol_version).answer(
        pick_shipping, roots("file:///x")
    )
    with pytest.raises(AssertionError, match="reply for 'roots/list', not 'elicitation/create'"):
        await client.call_tool("send_gift", {"title": "Dune"})


async def test_a_reply_may_be_computed_from_the_question(protocol_version: str) -> None:
    def express_for_dune(question: AskedQuestion) -> Any:
        return accept(express="Dune" in (question.message or ""))

    client = (
        ScriptedClient(server(), protocol_version=protocol_version)
        .answer(pick_shipping, express_for_dune)
        .answer(write_note, sampled("Hi"))
        .answer(find_folder, roots("file:///g"))
    )
    result = await client.call_tool("send_gift", {"title": "Emma"})
    assert result.structured_content == {"result": "Emma: express=False, note='Hi', into file:///g"}


async def test_answer_needs_a_function() -> None:
    with pytest.raises(TypeError, match="needs the resolver function, got 'pick_shipping'"):
        ScriptedClient(server()).answer("pick_shipping", accept())  # type: ignore[arg-type]
