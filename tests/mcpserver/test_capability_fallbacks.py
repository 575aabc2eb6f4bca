"""Capability fallbacks: `Default(value)` or `AskModel()` instead of `-32021` when the client cannot answer."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import (
    AskModel,
    Context,
    Default,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcpdi.lowlevel import MCPError, NoBackChannel
from mcpdi.types import (
    CreateMessageResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)

from .conftest import answers, connect

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]


class Size(BaseModel):
    size: str


def ask_size() -> Elicit[Size]:
    return Elicit("Which size?", Size, fallback=Default(Size(size="M")))


def ask_size_or_take(size: str | None = None) -> Size | Elicit[Size]:
    if size is not None:
        return Size(size=size)
    return Elicit("Which size?", Size, fallback=AskModel())


def ask_size_with_a_hint() -> Elicit[Size]:
    return Elicit("Which size?", Size, fallback=AskModel(argument="size", hint="Sizes are S, M or L."))


def ask_size_nowhere() -> Elicit[Size]:
    return Elicit("Which size?", Size, fallback=AskModel())


def ask_size_plainly() -> Elicit[Size]:
    return Elicit("Which size?", Size)


HELLO = [SamplingMessage(role="user", content=TextContent(type="text", text="hi"))]
CANNED = CreateMessageResult(role="assistant", content=TextContent(type="text", text="canned"), model="none")


def ask_llm() -> Sample:
    return Sample(HELLO, max_tokens=5, fallback=Default(CANNED))


def ask_roots() -> ListRoots:
    return ListRoots(fallback=Default({"roots": []}))


def fallback_server() -> MCPServer:
    mcp = MCPServer("Fallbacks")

    @mcp.tool()
    def order(size: Annotated[Size, Resolve(ask_size)]) -> str:
        return size.size

    @mcp.tool()
    def order_outcome(size: Annotated[ElicitationResult[Size], Resolve(ask_size)]) -> str:
        return f"{size.action} {size.data.size if size.action == 'accept' else ''}"

    @mcp.tool()
    def order_by_model(chosen: Annotated[Size, Resolve(ask_size_or_take)], size: str | None = None) -> str:
        return chosen.size

    @mcp.tool()
    def order_and_chat(
        size: Annotated[Size, Resolve(ask_size_plainly)],
        reply: Annotated[CreateMessageResult, Resolve(ask_llm)],
    ) -> str:
        return f"{size.size} {reply.model}"

    @mcp.tool()
    def order_hinted(size: Annotated[Size, Resolve(ask_size_with_a_hint)]) -> str:
        return size.size

    @mcp.tool()
    def order_nowhere(size: Annotated[Size, Resolve(ask_size_nowhere)]) -> str:
        return size.size

    @mcp.tool()
    def order_plainly(size: Annotated[Size, Resolve(ask_size_plainly)]) -> str:
        return size.size

    @mcp.tool()
    def chat(reply: Annotated[CreateMessageResult, Resolve(ask_llm)]) -> str:
        return reply.model

    @mcp.tool()
    def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> int:
        return len(found.roots)

    return mcp


NO_CAPABILITIES: dict[str, Any] = {}
ELICITATION = {"elicitation": {}}
ANSWER_L = {"action": "accept", "content": {"size": "L"}}


def text(call: Any) -> str:
    assert call.result is not None, call.error
    return call.text


@pytest.mark.parametrize("protocol_version", ERAS)
@pytest.mark.parametrize(
    ("tool", "expected"), [("order", "M"), ("order_outcome", "accept M"), ("chat", "none"), ("roots", "0")]
)
async def test_a_default_answers_for_a_client_without_the_capability(
    protocol_version: str, tool: str, expected: str
) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        call = await client.call_tool(tool, {})
    assert call.asked == []
    assert text(call) == expected


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_a_client_with_the_capability_is_still_asked(protocol_version: str) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=ELICITATION, script=answers(elicit=ANSWER_L)
    ) as client:
        call = await client.call_tool("order", {})
    assert text(call) == "L"


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_a_default_and_a_real_question_share_a_call(protocol_version: str) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=ELICITATION, script=answers(elicit=ANSWER_L)
    ) as client:
        call = await client.call_tool("order_and_chat", {})
    assert text(call) == "L none"
    assert [method for method, _ in call.asked] == ["elicitation/create"]


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_ask_model_tells_the_model_which_argument_to_pass(protocol_version: str) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        refused = await client.call_tool("order_by_model", {})
        chosen = await client.call_tool("order_by_model", {"size": "S"})
    assert refused.result is not None
    assert refused.result["isError"] is True
    assert refused.text == snapshot(
        "Error executing tool order_by_model: the question 'Which size?' cannot reach the client (it did not declare the form elicitation capability); call 'order_by_model' again and pass the value as argument 'size'"
    )
    assert text(chosen) == "S"


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_ask_model_can_name_the_argument_and_add_a_hint(protocol_version: str) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        call = await client.call_tool("order_hinted", {})
    assert call.text == snapshot(
        "Error executing tool order_hinted: the question 'Which size?' cannot reach the client (it did not declare the form elicitation capability); call 'order_hinted' again and pass the value as argument 'size'. Sizes are S, M or L."
    )


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_ask_model_without_an_argument_to_name_is_the_authors_mistake(
    protocol_version: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        call = await client.call_tool("order_nowhere", {})
    assert call.text == "Error executing tool order_nowhere"
    (record,) = [r for r in caplog.records if r.exc_info]
    assert record.exc_info is not None
    assert "falls back to AskModel(), but takes no argument of 'order_nowhere'" in str(record.exc_info[1])


@pytest.mark.parametrize("protocol_version", ERAS)
async def test_without_a_fallback_the_missing_capability_is_still_an_error(protocol_version: str) -> None:
    async with connect(
        fallback_server(), protocol_version, capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        call = await client.call_tool("order_plainly", {})
    assert call.error == snapshot(
        {
            "code": -32021,
            "message": "Client did not declare the form elicitation capability required by resolver 'ask_size_plainly'",
            "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
        }
    )


def no_channel(key: str | None, method: str, params: Any) -> Any:
    raise NoBackChannel(method, "plain JSON responses")


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("order", snapshot("M")),
        (
            "order_by_model",
            snapshot(
                "Error executing tool order_by_model: the question 'Which size?' cannot reach the client (this connection cannot carry requests to the client); call 'order_by_model' again and pass the value as argument 'size'"
            ),
        ),
        (
            "order_plainly",
            snapshot(
                "Error executing tool order_plainly: Resolver 'ask_size_plainly' needs to ask the client (elicitation/create), but this connection cannot carry requests to the client; connect over stdio or a streaming HTTP session, or with protocol 2026-07-28"
            ),
        ),
    ],
)
async def test_a_connection_without_a_back_channel_uses_the_fallback(tool: str, expected: str) -> None:
    async with connect(fallback_server(), "2025-11-25", script=no_channel) as client:
        call = await client.call_tool(tool, {})
    assert call.text == expected


def test_a_default_is_validated_into_the_answer_type() -> None:
    question = Elicit("Which size?", Size, fallback=Default({"size": "M"}))
    assert question.fallback == Default(Size(size="M"))
    assert ListRoots(fallback=Default({"roots": []})).fallback == Default(ListRootsResult(roots=[]))


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (
            lambda: Elicit("Which size?", Size, fallback=Default({"colour": "red"})),
            snapshot(
                "Elicit('Which size?', Size): the fallback Default is not a Size: 1 validation error for Size"
            ),
        ),
        (
            lambda: Sample(HELLO, max_tokens=5, fallback=Default("canned")),
            snapshot(
                "Sample: the fallback Default is not a CreateMessageResult: 1 validation error for CreateMessageResult"
            ),
        ),
        (
            lambda: ListRoots(fallback=Default([])),
            snapshot(
                "ListRoots: the fallback Default is not a ListRootsResult: 1 validation error for ListRootsResult"
            ),
        ),
    ],
)
def test_a_default_that_is_not_an_answer_is_refused_when_the_question_is_built(build: Any, text: str) -> None:
    with pytest.raises(TypeError) as caught:
        build()
    assert str(caught.value).splitlines()[0] == text


async def test_the_call_tool_helper_sees_the_fallback_in_both_eras() -> None:
    mcp = fallback_server()
    for era in ERAS:
        result = await mcp.call_tool("order", protocol_version=era, capabilities={})
        assert result.content == [TextContent(type="text", text="M")]
        with pytest.raises(MCPError, match="form elicitation capability") as caught:
            await mcp.call_tool("order_plainly", protocol_version=era, capabilities={})
        assert caught.value.code == -32021


def imperative_server() -> MCPServer:
    mcp = MCPServer("Imperative")

    @mcp.tool()
    async def size_now(ctx: Context) -> str:
        outcome = await ctx.elicit("Which size?", Size, fallback=Default({"size": "M"}))
        return outcome.data.size if outcome.action == "accept" else outcome.action

    @mcp.tool()
    async def size_from_model(ctx: Context, size: str | None = None) -> str:
        if size is not None:
            return size
        outcome = await ctx.elicit("Which size?", Size, fallback=AskModel(argument="size"))
        return outcome.data.size if outcome.action == "accept" else outcome.action

    @mcp.tool()
    async def roots_now(ctx: Context) -> int:
        return len((await ctx.list_roots(fallback=Default(ListRootsResult(roots=[])))).roots)

    @mcp.tool()
    async def llm_now(ctx: Context) -> str:
        return (await ctx.sample("hi", max_tokens=5, fallback=Default(CANNED))).model

    return mcp


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("size_now", snapshot("M")),
        ("roots_now", snapshot("0")),
        ("llm_now", snapshot("none")),
        (
            "size_from_model",
            snapshot(
                "Error executing tool size_from_model: the question 'Which size?' cannot reach the client (it did not declare the form elicitation capability); call the tool again and pass the value as argument 'size'"
            ),
        ),
    ],
)
async def test_an_imperative_question_uses_its_fallback_too(tool: str, expected: str) -> None:
    async with connect(
        imperative_server(), "2025-11-25", capabilities=NO_CAPABILITIES, script=answers()
    ) as client:
        call = await client.call_tool(tool, {})
    assert call.asked == []
    assert call.text == expected


async def test_an_imperative_question_with_a_fallback_is_still_asked_of_a_client_that_can() -> None:
    async with connect(
        imperative_server(), "2025-11-25", capabilities=ELICITATION, script=answers(elicit=ANSWER_L)
    ) as client:
        call = await client.call_tool("size_now", {})
    assert call.text == "L"


async def test_an_imperative_question_without_a_back_channel_uses_its_fallback() -> None:
    async with connect(imperative_server(), "2025-11-25", script=no_channel) as client:
        call = await client.call_tool("size_now", {})
    assert call.text == "M"
