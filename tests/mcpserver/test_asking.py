"""Asking: capability checks, bad answers, registration checks of questions, imperative asks."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import threading
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import (
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcpdi.lowlevel import MCPError, NoBackChannel
from mcpdi.types import (
    CreateMessageResult,
    CreateMessageResultWithTools,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    Tool,
)

from .conftest import answers, connect

pytestmark = pytest.mark.anyio


class Name(BaseModel):
    name: str


class Nested(BaseModel):
    inner: Name


def ask_name() -> Elicit[Name]:
    return Elicit("Name?", Name)


def hello() -> list[SamplingMessage]:
    return [SamplingMessage(role="user", content=TextContent(type="text", text="hi"))]


def ask_llm() -> Sample:
    return Sample(hello(), max_tokens=5)


def ask_llm_with_tools() -> Sample:
    return Sample(hello(), max_tokens=5, tools=[Tool(name="t", input_schema={"type": "object"})])


def ask_roots() -> ListRoots:
    return ListRoots()


def asking_server() -> MCPServer:
    mcp = MCPServer("Asking")

    @mcp.tool()
    def elicits(who: Annotated[Name, Resolve(ask_name)]) -> str:
        return who.name

    @mcp.tool()
    def samples(reply: Annotated[CreateMessageResult, Resolve(ask_llm)]) -> str:
        return reply.model

    @mcp.tool()
    def samples_with_tools(
        reply: Annotated[CreateMessageResultWithTools, Resolve(ask_llm_with_tools)],
    ) -> str:
        return reply.model

    @mcp.tool()
    def lists_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> int:
        return len(roots.roots)

    return mcp


@pytest.mark.parametrize(
    ("tool", "capabilities", "error"),
    [
        (
            "elicits",
            {},
            snapshot(
                {
                    "code": -32021,
                    "message": "Client did not declare the form elicitation capability required by resolver 'ask_name'",
                    "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
                }
            ),
        ),
        (
            "elicits",
            {"elicitation": {"url": {}}},
            snapshot(
                {
                    "code": -32021,
                    "message": "Client did not declare the form elicitation capability required by resolver 'ask_name'",
                    "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
                }
            ),
        ),
        (
            "samples",
            {"roots": {}},
            snapshot(
                {
                    "code": -32021,
                    "message": "Client did not declare the sampling capability required by resolver 'ask_llm'",
                    "data": {"requiredCapabilities": {"sampling": {}}},
                }
            ),
        ),
        (
            "samples_with_tools",
            {"sampling": {}},
            snapshot(
                {
                    "code": -32021,
                    "message": "Client did not declare the sampling.tools capability required by resolver 'ask_llm_with_tools'",
                    "data": {"requiredCapabilities": {"sampling": {"tools": {}}}},
                }
            ),
        ),
        (
            "lists_roots",
            {"sampling": {}},
            snapshot(
                {
                    "code": -32021,
                    "message": "Client did not declare the roots capability required by resolver 'ask_roots'",
                    "data": {"requiredCapabilities": {"roots": {}}},
                }
            ),
        ),
    ],
)
async def test_a_question_the_client_cannot_answer_is_a_missing_capability_error(
    protocol_version: str, tool: str, capabilities: dict[str, Any], error: dict[str, Any]
) -> None:
    async with connect(
        asking_server(), protocol_version, capabilities=capabilities, script=answers()
    ) as client:
        call = await client.call_tool(tool, {})
    assert call.error == error
    assert call.asked == []


async def test_a_bare_elicitation_capability_means_form_mode(protocol_version: str) -> None:
    script = answers(elicit={"action": "accept", "content": {"name": "Ada"}})
    async with connect(
        asking_server(), protocol_version, capabilities={"elicitation": {}}, script=script
    ) as client:
        call = await client.call_tool("elicits", {})
    assert call.text == "Ada"


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (
            {"action": "accept"},
            snapshot(
                "Error executing tool elicits: Resolver 'ask_name' received an accepted elicitation with no content"
            ),
        ),
        (
            {"action": "accept", "content": {"nom": "Ada"}},
            snapshot(
                "Error executing tool elicits: Resolver 'ask_name' received an accepted elicitation whose content does not match the requested schema"
            ),
        ),
    ],
)
async def test_an_accepted_answer_that_does_not_fit_fails_the_call(
    protocol_version: str, answer: dict[str, Any], text: str
) -> None:
    async with connect(asking_server(), protocol_version, script=answers(elicit=answer)) as client:
        call = await client.call_tool("elicits", {})
    assert call.result["isError"] is True
    assert call.text == text


async def test_a_sampling_answer_of_the_wrong_kind_fails_the_call(protocol_version: str) -> None:
    async with connect(asking_server(), protocol_version, script=answers(sample={"roots": []})) as client:
        call = await client.call_tool("samples", {})
    assert call.text == snapshot(
        "Error executing tool samples: Resolver 'ask_llm' received a response of the wrong kind"
    )


def test_an_elicit_of_a_nested_model_is_refused_when_built() -> None:
    with pytest.raises(TypeError) as caught:
        Elicit("Where?", Nested)
    assert str(caught.value) == snapshot(
        "Nested.inner cannot be asked in a form: it renders as {'$ref': '#/$defs/Name'}; a form field must be a string, number, integer, boolean or enum (use one of those, or ask for it in a separate question)"
    )


def test_include_context_other_than_none_is_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match="include_context='thisServer' is deprecated"):
        Sample(hello(), max_tokens=5, include_context="thisServer")


async def test_a_tool_body_can_ask_imperatively_in_the_handshake_era() -> None:
    mcp = MCPServer("Asking")

    @mcp.tool()
    async def interview(ctx: Context) -> str:
        who = await ctx.elicit("Name?", Name)
        reply = await ctx.sample("hi", max_tokens=5)
        roots = await ctx.list_roots()
        name = who.data.name if who.action == "accept" else "?"
        return f"{name} {reply.model} {len(roots.roots)}"

    script = answers(
        elicit={"action": "accept", "content": {"name": "Ada"}},
        sample={"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m1"},
        roots={"roots": []},
    )
    async with connect(mcp, "2025-11-25", script=script) as client:
        call = await client.call_tool("interview", {})
    assert call.text == "Ada m1 0"


@pytest.mark.parametrize(
    ("action", "outcome"), [("decline", DeclinedElicitation), ("cancel", CancelledElicitation)]
)
async def test_an_imperative_elicitation_returns_the_refusal(action: str, outcome: type) -> None:
    mcp = MCPServer("Asking")

    @mcp.tool()
    async def interview(ctx: Context) -> str:
        who = await ctx.elicit("Name?", Name)
        return type(who).__name__

    async with connect(mcp, "2025-11-25", script=answers(elicit={"action": action})) as client:
        call = await client.call_tool("interview", {})
    assert call.text == outcome.__name__


async def test_a_tool_body_can_drive_its_own_rounds_at_2026() -> None:
    mcp = MCPServer("Asking")

    @mcp.tool()
    async def own_rounds(ctx: Context) -> str | InputRequiredResult:
        if ctx.input_responses is None:
            request = {
                "method": "elicitation/create",
                "params": {
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
            }
            return InputRequiredResult.model_validate(
                {"inputRequests": {"who": request}, "requestState": "step-1"}
            )
        answer = ctx.input_responses["who"]
        return f"{ctx.request_state}: {answer.content}"  # type: ignore[union-attr]

    script = answers(elicit={"action": "accept", "content": {"name": "Ada"}})
    async with connect(mcp, "2026-07-28", script=script) as client:
        call = await client.call_tool("own_rounds", {})
    assert call.text == "step-1: {'name': 'Ada'}"
    assert call.rounds == 2


async def test_sync_tool_bodies_run_on_a_worker_thread(protocol_version: str) -> None:
    mcp = MCPServer("Threads")
    seen: list[bool] = []

    @mcp.tool()
    def where() -> str:
        seen.append(threading.current_thread() is threading.main_thread())
        return "ok"

    async with connect(mcp, protocol_version) as client:
        await client.call_tool("where", {})
    assert seen == [False]


async def test_a_legacy_connection_without_a_back_channel_fails_the_call_naming_the_resolver() -> None:
    def no_channel(key: str | None, method: str, params: Any) -> Any:
        raise NoBackChannel(method, "plain JSON responses")

    async with connect(asking_server(), "2025-11-25", script=no_channel) as client:
        call = await client.call_tool("elicits", {})
    assert call.result["isError"] is True
    assert call.text == snapshot(
        "Error executing tool elicits: Resolver 'ask_name' needs to ask the client (elicitation/create), but this connection cannot carry requests to the client; connect over stdio or a streaming HTTP session, or with protocol 2026-07-28"
    )


def test_a_sample_whose_tool_results_do_not_answer_the_tool_uses_is_refused() -> None:
    use = SamplingMessage.model_validate(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]}
    )
    wrong = SamplingMessage.model_validate(
        {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u2", "content": []}]}
    )
    right = SamplingMessage.model_validate(
        {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1", "content": []}]}
    )
    Sample([*hello(), use, right], max_tokens=5)
    with pytest.raises(ValueError, match="tool_result") as caught:
        Sample([*hello(), use, wrong], max_tokens=5)
    assert str(caught.value) == snapshot(
        "Sample: the tool_result blocks of the last message (['u2']) must answer exactly the tool_use blocks of the message before it (['u1'])"
    )


async def test_a_client_error_answer_in_the_handshake_era_is_relayed() -> None:
    def refuse(key: str | None, method: str, params: Any) -> Any:
        raise MCPError(-1, "User rejected")

    async with connect(asking_server(), "2025-11-25", script=refuse) as client:
        call = await client.call_tool("elicits", {})
    assert call.error == {"code": -1, "message": "User rejected"}


class Profile(BaseModel):
    name: str
    nickname: str | None = None
    age: int = 30


def test_the_form_schema_writes_optional_fields_as_their_type() -> None:
    question = Elicit("Who?", Profile)
    assert question.wire_params(modern=True) == {
        "mode": "form",
        "message": "Who?",
        "requestedSchema": {
            "properties": {
                "name": {"title": "Name", "type": "string"},
                "nickname": {"title": "Nickname", "type": "string"},
                "age": {"default": 30, "title": "Age", "type": "integer"},
            },
            "required": ["name"],
            "type": "object",
        },
    }
    legacy = question.wire_params(modern=False)
    assert legacy is not None
    assert legacy["requestedSchema"]["title"] == "Profile"
