"""All sessions of a process share one budget for buffered events (the heaviest sheds first) and
one for the questions waiting on their clients (past it a new question fails its call)."""

from __future__ import annotations

import json
import logging
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp import ClientSession
from mcp import MCPError as SdkError
from mcp.client.sse import sse_client
from transport_asgi import open_legacy_session as open_session
from transport_asgi import uvicorn_app as serving
from transport_sample_server import server as sample_server

from mcpdi.lowlevel import Server, ServerRequestContext
from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._http._legacy_session import LegacySession
from mcpdi_transport._http._registry import LocalSessions
from mcpdi_transport._http._sse import ByteBudget, EventStream, TotalBudget
from mcpdi_transport._http._sse_transport import build_sse_app
from mcpdi_transport._outbound import Waiting

pytestmark = pytest.mark.anyio

PAD = "x" * 2000
TOTAL = 20_000


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="chatter", input_schema={"type": "object"})])


async def chatter(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    """Send `count` log messages of 2000 bytes each, then wait until the session ends."""
    count = int((params.arguments or {}).get("count", 1))
    for number in range(count):
        await ctx.send_notification("notifications/message", {"level": "info", "data": f"{number}:{PAD}"})
    await anyio.sleep_forever()
    raise AssertionError  # pragma: no cover


chatty = Server("chatty", version="0.1.0", on_list_tools=list_tools, on_call_tool=chatter)


async def read_events(response: httpx2.Response, count: int) -> list[tuple[str, dict[str, Any]]]:
    """The ids and messages of the next `count` message events of an SSE response."""
    events: list[tuple[str, dict[str, Any]]] = []
    event_id = ""
    with anyio.fail_after(10):
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: {"):
                events.append((event_id, json.loads(line[6:])))
                if len(events) == count:
                    break
    return events


async def chat(client: httpx2.AsyncClient, headers: dict[str, str], id_: int, count: int) -> None:
    """Call `chatter`, read its `count` messages, and leave the call (and its stream) running."""
    body = {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "chatter", "arguments": {"count": count}},
    }
    async with client.stream("POST", "/mcp", json=body, headers=headers) as response:
        assert response.status_code == 200
        assert len(await read_events(response, count)) == count


def buffered(session: LegacySession) -> list[int]:
    return [stream.buffered_bytes for stream in session.streams.values()]


@pytest.mark.slow
async def test_many_sessions_together_hold_no_more_than_the_total_and_the_heaviest_sheds_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = build_http_app(chatty, max_buffered_bytes_total=TOTAL)
    sessions: LocalSessions = app.routes[0].endpoint.legacy.sessions  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    async with serving(app) as client:
        light_headers = await open_session(client)
        await chat(client, light_headers, 2, 2)  # the oldest events of all
        light = sessions.by_id[light_headers["mcp-session-id"]]
        light_bytes = buffered(light)
        heavy_headers = await open_session(client)
        with caplog.at_level(logging.WARNING, logger="mcpdi_transport"):
            for number in range(4):
                await chat(client, heavy_headers, 10 + number, 3)
        heavy = sessions.by_id[heavy_headers["mcp-session-id"]]
        held = sum(buffered(light)) + sum(buffered(heavy))
        assert sessions.total_budget.used == held
        assert held <= TOTAL
        assert buffered(light) == light_bytes  # untouched: the heavy session paid
        assert len(heavy.streams) == 4
        oldest, *_, newest = buffered(heavy)
        assert oldest == 0  # its oldest events went first
        assert newest > 3 * len(PAD)  # its newest are all kept
        # The light session's events can still be resumed, every one of them.
        resume = {**light_headers, "last-event-id": "2-0"}
        async with client.stream("GET", "/mcp", headers=resume) as response:
            resumed = await read_events(response, 2)
        # The heavy one's first stream resumes past what was dropped (nothing is left to send).
        assert heavy.find_stream("2-1") is not None
    assert [data for _, data in resumed] == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": f"{n}:{PAD}"},
        }
        for n in range(2)
    ]
    assert [event_id for event_id, _ in resumed] == ["2-1", "2-2"]
    overflows = [
        record.getMessage() for record in caplog.records if "max_buffered_bytes_total" in record.getMessage()
    ]
    assert overflows == [
        "buffered events of all sessions exceed max_buffered_bytes_total=20000: "
        "dropping the oldest events of the sessions holding the most"
    ]


def note(number: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "n", "params": {"pad": f"{number}:{'x' * 100}"}}


def test_the_total_takes_from_the_heaviest_session_and_an_ended_one_frees_its_share(
    caplog: pytest.LogCaptureFixture,
) -> None:
    total = TotalBudget(1000)
    light, heavy = ByteBudget(10_000, total), ByteBudget(10_000, total)
    kept = EventStream("1", resumable=True, budget=light)
    kept.append(note(0))
    shedding = EventStream("1", resumable=True, budget=heavy)
    with caplog.at_level(logging.WARNING, logger="mcpdi_transport"):
        for number in range(12):
            shedding.append(note(number))
    assert total.used == light.used + heavy.used <= 1000
    assert light.used == kept.buffered_bytes > 0
    assert heavy.used == shedding.buffered_bytes > 0
    assert (
        len([record for record in caplog.records if "max_buffered_bytes_total" in record.getMessage()]) == 1
    )
    heavy.close()
    assert (total.used, total.budgets, total.overflowing) == (light.used, {light}, True)
    kept.append(note(1))  # back under half the limit: the next overflow warns again
    assert not total.overflowing


def test_the_event_just_written_stays_even_past_the_total() -> None:
    total = TotalBudget(10)
    stream = EventStream("1", resumable=True, budget=ByteBudget(10_000, total))
    stream.append(note(0))
    stream.append(note(1))
    assert stream.position_after("1-0") == 1
    assert total.used == stream.buffered_bytes > 10


class HeldAnswers:
    """An elicitation callback that answers only once `release` is set; counts what it was asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.release = anyio.Event()
        self._changed = anyio.Event()

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked += 1
        self._changed.set()
        self._changed = anyio.Event()
        await self.release.wait()
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def until_asked(self, count: int) -> None:
        with anyio.fail_after(20):
            while self.asked < count:
                await self._changed.wait()


WAITING = 3
"""`max_pending_client_requests` of the tests below."""


def waiting_refusal(limit: int) -> str:
    return (
        f"The server cannot ask the client 'elicitation/create' now: {limit} requests to clients already "
        f"wait for an answer (max_pending_client_requests); try the call again later"
    )


async def ask_past_the_budget(
    sessions: list[Any], held: HeldAnswers, waiting: Waiting, caplog: pytest.LogCaptureFixture
) -> tuple[list[str], SdkError]:
    """`WAITING` sessions each leave a question waiting; one more session's question fails its call.

    Then the held questions are answered: the texts of those calls and the refusal are returned.
    """
    *askers, late = sessions
    answered: list[str] = []
    refusals: list[SdkError] = []

    async def greet(session: Any) -> None:
        result = await session.call_tool("greet", {})
        answered.append(result.content[0].text)

    async with anyio.create_task_group() as group:
        for session in askers:
            group.start_soon(greet, session)
        await held.until_asked(WAITING)
        assert waiting.count == WAITING
        with (
            pytest.raises(SdkError) as refused,
            caplog.at_level(logging.WARNING, logger="mcpdi_transport"),
            anyio.fail_after(20),
        ):
            await late.call_tool("greet", {})
        refusals.append(refused.value)
        assert held.asked == WAITING  # the refused question never reached its client
        held.release.set()
    assert waiting.count == 0
    with anyio.fail_after(20):
        again = await late.call_tool("greet", {})  # the budget was given back
    assert again.content[0].text == "Hi, Ada!"  # pyright: ignore[reportAttributeAccessIssue]
    warnings = [record.getMessage() for record in caplog.records if "max_pending" in record.getMessage()]
    assert warnings == [
        f"server-to-client requests waiting for an answer reach max_pending_client_requests={WAITING}: "
        "new ones fail their calls"
    ]
    return answered, refusals[0]


@pytest.mark.slow
async def test_past_the_process_budget_of_waiting_questions_a_handshake_session_call_fails_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = build_http_app(sample_server, max_pending_client_requests=WAITING)
    registry: LocalSessions = app.routes[0].endpoint.legacy.sessions  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    held = HeldAnswers()
    async with serving(app) as http, AsyncExitStack() as stack:
        url = str(http.base_url.join("/mcp"))
        sessions = [
            await stack.enter_async_context(SdkClient(url, mode="legacy", elicitation_callback=held))
            for _ in range(WAITING + 1)
        ]
        answered, refused = await ask_past_the_budget(sessions, held, registry.total_budget.waiting, caplog)
        assert len(registry.by_id) == WAITING + 1  # one process, many sessions, one budget
    assert answered == ["Hi, Ada!"] * WAITING
    assert (refused.error.code, refused.error.message) == (-32603, waiting_refusal(WAITING))


@pytest.mark.slow
async def test_past_the_process_budget_of_waiting_questions_an_http_sse_call_fails_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = build_sse_app(sample_server, max_pending_client_requests=WAITING)
    endpoints: Any = app.routes[0].endpoint.app  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    waiting: Waiting = endpoints.__self__.waiting
    held = HeldAnswers()
    async with serving(app) as http, AsyncExitStack() as stack:
        url = str(http.base_url.join("/sse"))
        sessions: list[Any] = []
        for _ in range(WAITING + 1):
            read, write = await stack.enter_async_context(sse_client(url))
            session = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=held))
            await session.initialize()
            sessions.append(session)
        answered, refused = await ask_past_the_budget(sessions, held, waiting, caplog)
        assert len(endpoints.__self__.sessions) == WAITING + 1
    assert answered == ["Hi, Ada!"] * WAITING
    assert (refused.error.code, refused.error.message) == (-32603, waiting_refusal(WAITING))


def test_a_budget_of_no_waiting_question_is_refused_when_the_app_is_built() -> None:
    for build in (build_http_app, build_sse_app):
        with pytest.raises(ValueError, match="max_pending_client_requests must be at least 1, not 0"):
            build(sample_server, max_pending_client_requests=0)
