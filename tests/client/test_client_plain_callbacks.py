"""Client callbacks may be plain functions as well as coroutines, in both eras."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from mcpdi import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcpdi_transport import Client
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_llm() -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="Nickname?"))
    return Sample([message], max_tokens=5)


def ask_roots() -> ListRoots:
    return ListRoots()


mcp = MCPServer("plain")


@mcp.tool()
async def greet(
    who: Annotated[Name, Resolve(ask_name)],
    nick: Annotated[types.CreateMessageResult, Resolve(ask_llm)],
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots)],
    ctx: Context,
) -> str:
    await ctx.report_progress(1, 2, "halfway")
    await ctx.info("greeting")
    text = getattr(nick.content, "text", "")
    return f"Hi {who.name} ({text}) in {roots.roots[0].uri}"


@pytest.mark.parametrize("mode", MODES)
async def test_plain_function_callbacks_answer_questions_and_receive_notifications(mode: str) -> None:
    threads: list[str] = []
    logged: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []

    def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        threads.append(threading.current_thread().name)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    def sample(
        context: RequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = types.TextContent(type="text", text="Countess")
        return types.CreateMessageResult(role="assistant", content=content, model="m")

    def list_roots(context: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": "file:///home/ada"}]})

    def log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with Client(
        mcp,
        mode=mode,
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=list_roots,
        logging_callback=log,
        log_level="info",
    ) as client:
        result = await client.call_tool("greet", {}, progress_callback=on_progress)
    assert result.content == [types.TextContent(type="text", text="Hi Ada (Countess) in file:///home/ada")]
    assert threads
    assert threads[0] != threading.main_thread().name  # a plain callback runs on a worker thread
    assert logged == ["greeting"]
    assert progress == [(1, 2, "halfway")]


async def test_a_plain_function_returning_an_awaitable_is_awaited() -> None:
    async def later(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Grace"})

    small = MCPServer("small")

    @small.tool()
    def hello(who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"Hello {who.name}"

    async with Client(small, mode="2026-07-28", elicitation_callback=lambda c, p: later(c, p)) as client:
        result = await client.call_tool("hello", {})
    assert result.content == [types.TextContent(type="text", text="Hello Grace")]


def test_the_callback_context_answers_to_both_its_names() -> None:
    import mcpdi_transport

    assert mcpdi_transport.ClientRequestContext is mcpdi_transport.RequestContext is RequestContext
