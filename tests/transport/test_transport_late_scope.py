"""A request's cancel scope is entered only once its handler waits, and then where it belongs.

`handle_safely` runs a handler's first step before entering the request's scope: an answer
given in one step never enters it. A handler that waits inside scopes of its own (a task
group, a timeout, a shield) gets the request's scope placed around them, so a cancel (a
client's `notifications/cancelled`, a client leaving, a shutdown) ends the handler, a
shield still shields, an inner timeout still fires on its own, and every scope exits in
order. The structure is checked against a scope entered first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Generator
from typing import Annotated, Any, cast

import anyio
import httpx2
import pytest
from anyio._backends import _asyncio as anyio_asyncio
from transport_asgi import MODERN_META, http_client, modern_headers, open_legacy_session, streaming

from mcpdi import MCPServer, Resolve
from mcpdi.lowlevel import Request
from mcpdi_transport._http import _late_scope
from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._http._common import SHUTTING_DOWN, Running, handle_safely
from mcpdi_transport._http._late_scope import EARLY, KNOWN_LAYOUT, LateScope, resumed, scope_before

pytestmark = pytest.mark.anyio

trace: list[str] = []


async def _held(name: str) -> int:
    trace.append(f"{name} waits")
    try:
        await anyio.sleep_forever()
    finally:
        trace.append(f"{name} ended")
    return 0  # pragma: no cover - never reached


async def left_side() -> int:
    return await _held("left")


async def right_side() -> int:
    return await _held("right")


mcp = MCPServer("late-scope")


@mcp.tool()
async def together(
    left: Annotated[int, Resolve(left_side, concurrent=True)],
    right: Annotated[int, Resolve(right_side, concurrent=True)],
) -> str:
    """Waits in the engine's task group, on both resolvers."""
    return f"{left} {right}"  # pragma: no cover - never reached


@mcp.tool()
async def moves_on() -> str:
    """Waits inside a timeout of its own: a cancel of the request must not look like that timeout."""
    with anyio.move_on_after(60):
        trace.append("moves_on waits")
        await anyio.sleep_forever()
    trace.append("moved on")
    return "moved on"


@mcp.tool()
async def times_out() -> str:
    """Its own short timeout fires inside the request's scope and is its own to handle."""
    try:
        with anyio.fail_after(0.01):
            await anyio.sleep_forever()
    except TimeoutError:
        return "timed out on its own"
    return "not reached"  # pragma: no cover


@mcp.tool()
async def shielded() -> str:
    """Waits in a shield first: the cancel lands once the shield is left."""
    with anyio.CancelScope(shield=True):
        trace.append("shield waits")
        await anyio.sleep(0.2)
        trace.append("shield done")
    try:
        await anyio.sleep_forever()
    finally:
        trace.append("after the shield, cancelled")
    return "not reached"  # pragma: no cover


@mcp.tool()
async def at_once(text: str) -> str:
    """Answers in one step."""
    return text


running_of: list[dict[str, Any]] = []
"""The `running` table of the session the peeking tool is called in (the test puts it here)."""


@mcp.tool()
async def peeks() -> str:
    """Reports what its session holds for it before and after it waits."""
    table = running_of[0]
    trace.append(f"first step: {list(table.values())}")
    await anyio.sleep(0)
    trace.append(f"after a wait: {[type(scope).__name__ for scope in table.values()]}")
    return "peeked"


@pytest.fixture(autouse=True)
def _clear_trace() -> None:
    trace.clear()


async def _until_traced(*entries: str) -> None:
    with anyio.fail_after(5):
        while not all(entry in trace for entry in entries):
            await anyio.sleep(0.005)


def _call(id_: int, name: str, arguments: dict[str, Any] | None = None, *, modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def _running(app: Any) -> Running:
    running = app.state.mcpdi_drain.__self__.running  # the MCP endpoint's running state
    assert running is not None
    return cast("Running", running)


async def _answer(exchange: Any) -> dict[str, Any]:
    """The whole JSON body of the exchange's response."""
    body = b""
    with anyio.fail_after(5):
        async for chunk in exchange._chunks_out:
            body += chunk
    assert exchange.headers["content-type"] == "application/json"
    return json.loads(body)


@contextlib.asynccontextmanager
async def _app(**options: Any) -> AsyncIterator[tuple[Any, httpx2.AsyncClient]]:
    app = build_http_app(mcp, json_response=True, **options)
    async with http_client(app) as client:
        yield app, client


def test_the_installed_anyio_keeps_its_scopes_as_late_entry_expects() -> None:
    # Were this False, every request would enter its scope first again: correct, and slower.
    assert KNOWN_LAYOUT


# ---- through the app, as a client meets it ----


async def test_a_cancelled_legacy_call_ends_resolvers_waiting_in_the_engines_task_group() -> None:
    async with _app() as (app, client):
        headers = await open_legacy_session(client)
        async with streaming(app, "POST", headers, _call(8, "together", modern=False)) as exchange:
            await _until_traced("left waits", "right waits")
            assert len(_running(app).in_flight) == 1  # waiting: in flight, cancellable
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
            assert (await client.post("/mcp", json=cancel, headers=headers)).status_code == 202
            answer = await _answer(exchange)
        assert _running(app).in_flight == {}
    assert answer["error"]["message"] == "Request cancelled"
    assert sorted(trace) == ["left ended", "left waits", "right ended", "right waits"]


@pytest.mark.parametrize(
    ("tool", "waiting", "traced"),
    [
        # its own timeout does not fire instead: the cancel is the request's, not the timeout's
        ("moves_on", "moves_on waits", ["moves_on waits"]),
        # the shield's wait runs to its end; the cancel lands at the next wait after it
        ("shielded", "shield waits", ["shield waits", "shield done", "after the shield, cancelled"]),
    ],
)
async def test_a_cancel_reaches_a_handler_through_the_scopes_it_holds(
    tool: str, waiting: str, traced: list[str]
) -> None:
    async with _app() as (app, client):
        headers = await open_legacy_session(client)
        async with streaming(app, "POST", headers, _call(9, tool, modern=False)) as exchange:
            await _until_traced(waiting)
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
            assert (await client.post("/mcp", json=cancel, headers=headers)).status_code == 202
            answer = await _answer(exchange)
    assert answer["error"]["message"] == "Request cancelled"
    assert trace == traced


async def test_a_session_holds_a_running_request_and_its_scope_once_it_waits() -> None:
    async with _app() as (app, client):
        headers = await open_legacy_session(client)
        sessions = app.routes[0].endpoint.legacy.sessions.by_id
        session = sessions[headers["mcp-session-id"]]
        running_of[:] = [session.running]
        response = await client.post("/mcp", json=_call(21, "peeks", modern=False), headers=headers)
        assert response.json()["result"]["content"][0]["text"] == "peeked"
        assert session.running == {}
        # A table entry without a scope yet is nothing to stop when the session ends.
        session.running["22"] = None
        assert not session.cancel(22)
        session.end()
    running_of.clear()
    assert trace == ["first step: [None]", "after a wait: ['CancelScope']"]


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "modern"])
async def test_a_handlers_own_timeout_fires_inside_the_requests_scope(modern: bool) -> None:
    async with _app() as (_, client):
        headers = modern_headers("tools/call", "times_out") if modern else await open_legacy_session(client)
        response = await client.post("/mcp", json=_call(11, "times_out", modern=modern), headers=headers)
    assert response.json()["result"]["content"][0]["text"] == "timed out on its own"


async def test_a_modern_client_leaving_cancels_a_handler_waiting_in_a_task_group() -> None:
    async with _app() as (app, _):
        headers = modern_headers("tools/call", "together")
        async with streaming(app, "POST", headers, _call(12, "together", modern=True)) as exchange:
            await _until_traced("left waits", "right waits")
            exchange.disconnect.set()
            with anyio.fail_after(5):
                await exchange.finished.wait()
            assert sorted(trace) == ["left ended", "left waits", "right ended", "right waits"]
            assert _running(app).in_flight == {}


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "modern"])
async def test_a_shutdown_answers_a_handler_waiting_in_its_own_timeout(modern: bool) -> None:
    async with _app() as (app, client):
        headers = modern_headers("tools/call", "moves_on") if modern else await open_legacy_session(client)
        async with streaming(app, "POST", headers, _call(13, "moves_on", modern=modern)) as exchange:
            await _until_traced("moves_on waits")
            _running(app).stop_requests()
            answer = await _answer(exchange)
            _running(app).stopping = False  # the app itself is not stopping: its lifespan ends as usual
    assert answer["error"] == {"code": -32603, "message": SHUTTING_DOWN}
    assert "moved on" not in trace


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "modern"])
async def test_an_answer_given_in_one_step_never_enters_its_scope(
    modern: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered: list[object] = []
    real = LateScope.__enter__

    def counting(self: LateScope) -> anyio.CancelScope:
        entered.append(self)
        return real(self)

    monkeypatch.setattr(LateScope, "__enter__", counting)
    async with _app() as (_, client):
        headers = modern_headers("tools/call", "at_once") if modern else await open_legacy_session(client)
        response = await client.post(
            "/mcp", json=_call(14, "at_once", {"text": "hi"}, modern=modern), headers=headers
        )
        assert response.json()["result"]["content"][0]["text"] == "hi"
        assert entered == []
        headers = modern_headers("tools/call", "times_out") if modern else headers
        await client.post("/mcp", json=_call(15, "times_out", modern=modern), headers=headers)
    assert len(entered) == 1  # a handler that waits gets its scope


async def test_with_an_anyio_layout_it_does_not_know_every_scope_is_entered_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_late_scope, "KNOWN_LAYOUT", False)
    late: list[object] = []
    monkeypatch.setattr(LateScope, "__enter__", lambda self: late.append(self))
    async with _app() as (app, client):
        headers = await open_legacy_session(client)
        response = await client.post(
            "/mcp", json=_call(31, "at_once", {"text": "hi"}, modern=False), headers=headers
        )
        assert response.json()["result"]["content"][0]["text"] == "hi"
        modern = modern_headers("tools/call", "at_once")
        response = await client.post(
            "/mcp", json=_call(32, "at_once", {"text": "yo"}, modern=True), headers=modern
        )
        assert response.json()["result"]["content"][0]["text"] == "yo"
        async with streaming(app, "POST", headers, _call(33, "together", modern=False)) as exchange:
            await _until_traced("left waits", "right waits")
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 33}}
            assert (await client.post("/mcp", json=cancel, headers=headers)).status_code == 202
            answer = await _answer(exchange)
    assert answer["error"]["message"] == "Request cancelled"
    assert sorted(trace) == ["left ended", "left waits", "right ended", "right waits"]
    assert late == []


# ---- `handle_safely` itself, with a runner of its own ----


class _Runner:
    def __init__(self, handle: Callable[..., Any]) -> None:
        self.handle = handle


_REQUEST = Request(id=1, method="tools/call", params={})


async def _handled(handle: Callable[..., Any], **options: Any) -> tuple[Running, Any]:
    done: list[tuple[Running, Any]] = []
    async with anyio.create_task_group() as group:
        running = Running(runner=cast("Any", _Runner(handle)), task_group=group)
        nothing: Any = None  # the fake runner reads neither connection nor peer
        done.append((running, await handle_safely(running, _REQUEST, nothing, nothing, **options)))
    return done[0]


async def test_a_runner_failing_in_its_first_step_is_answered_with_an_internal_error() -> None:
    async def fails(*_: Any) -> dict[str, Any]:
        raise RuntimeError("the runner broke")

    _, answer = await _handled(fails)
    assert answer["error"]["code"] == -32603


async def test_a_runner_failing_after_it_waited_is_answered_with_an_internal_error() -> None:
    async def fails(*_: Any) -> dict[str, Any]:
        await anyio.sleep(0)
        raise RuntimeError("the runner broke")

    running, answer = await _handled(fails)
    assert answer["error"]["code"] == -32603
    assert running.in_flight == {}


async def test_a_scope_is_made_only_for_a_handler_that_waits_and_handed_to_on_wait_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[anyio.CancelScope] = []
    real = Running.cancel_scope

    def making(self: Running) -> anyio.CancelScope:
        made.append(real(self))
        return made[-1]

    monkeypatch.setattr(Running, "cancel_scope", making)
    given: list[anyio.CancelScope] = []

    async def at_once(*_: Any) -> dict[str, Any]:
        return {"answered": "at once"}

    _, answer = await _handled(at_once, on_wait=given.append)
    assert answer == {"answered": "at once"}
    assert made == []
    assert given == []

    async def waits(*_: Any) -> dict[str, Any]:
        assert made == []  # its first step runs before any scope is made
        await anyio.sleep(0)
        assert len(given) == 1  # told of it before the handler went on
        return {"answered": "after a wait"}

    _, answer = await _handled(waits, on_wait=given.append)
    assert answer == {"answered": "after a wait"}
    assert len(made) == 1
    assert given == made


async def test_a_scope_cancelled_before_the_handler_waits_cancels_it_at_its_first_wait() -> None:
    scope = anyio.CancelScope()
    reached: list[str] = []

    async def waits(*_: Any) -> dict[str, Any]:
        scope.cancel()  # as a `notifications/cancelled` could, once anything else ran
        reached.append("first step")
        await anyio.sleep(0)
        reached.append("not reached")
        return {}

    _, answer = await _handled(waits, cancel_scope=scope)
    assert answer is None
    assert reached == ["first step"]
    assert scope.cancelled_caught


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio_the_scope_is_entered_first_and_a_shutdown_still_answers(anyio_backend: str) -> None:
    async def waits(*_: Any) -> dict[str, Any]:
        await anyio.sleep_forever()
        return {}  # pragma: no cover

    answers: list[Any] = []
    async with anyio.create_task_group() as group:
        running = Running(runner=cast("Any", _Runner(waits)), task_group=group)
        assert scope_before(running.scope_kind()) is EARLY

        async def serve() -> None:
            answers.append(await handle_safely(running, _REQUEST, cast("Any", None), cast("Any", None)))

        group.start_soon(serve)
        with anyio.fail_after(5):
            while not running.in_flight:
                await anyio.sleep(0.001)
        running.stop_requests()
    assert answers == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": SHUTTING_DOWN}}]


# ---- the structure: a scope entered late is the scope entered first ----


def _shape(task: asyncio.Task[Any], names: dict[int, str]) -> list[tuple[str, str | None, list[str], bool]]:
    """From the task's innermost scope out: (scope, its parent, its children, whether it holds the task)."""
    shape: list[tuple[str, str | None, list[str], bool]] = []
    state = anyio_asyncio._task_states.get(task)  # pyright: ignore[reportPrivateUsage]
    scope: Any = None if state is None else state.cancel_scope
    while scope is not None:
        parent = scope._parent_scope
        children = sorted(names.get(id(child), "?") for child in scope._child_scopes)
        shape.append(
            (
                names.get(id(scope), "?"),
                None if parent is None else names.get(id(parent), "?"),
                children,
                task in scope._tasks,
            )
        )
        scope = parent
    return shape


_Holds = Callable[[list[anyio.CancelScope]], contextlib.AbstractAsyncContextManager[None]]


@contextlib.asynccontextmanager
async def _nothing(scopes: list[anyio.CancelScope]) -> AsyncIterator[None]:
    yield


@contextlib.asynccontextmanager
async def _a_task_group(scopes: list[anyio.CancelScope]) -> AsyncIterator[None]:
    async with anyio.create_task_group() as group:
        scopes.append(group.cancel_scope)
        yield
        group.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def _a_timeout_in_a_shield(scopes: list[anyio.CancelScope]) -> AsyncIterator[None]:
    with anyio.CancelScope(shield=True) as shield:
        scopes.append(shield)
        with anyio.move_on_after(60) as timeout:
            scopes.append(timeout)
            yield


class _Held:
    """One handler run that waits inside `holds`'s scopes until released, and the scopes it holds."""

    def __init__(self, holds: _Holds, outer: bool) -> None:
        self.holds = holds
        self.outer = outer
        self.request = anyio.CancelScope()
        self.scopes: list[anyio.CancelScope] = []
        self.seen = anyio.Event()
        self.release = anyio.Event()

    async def handler(self) -> str:
        async with self.holds(self.scopes):
            self.seen.set()
            await self.release.wait()
        return "done"

    async def run(self, how: str) -> None:
        async with contextlib.AsyncExitStack() as stack:
            if self.outer:
                self.scopes.append(stack.enter_context(anyio.CancelScope()))
            if how == "first":
                with self.request:
                    assert await self.handler() == "done"
                return
            before = scope_before(type(self.request))
            assert before is not EARLY
            coroutine = self.handler()
            waiting_on = coroutine.send(None)
            with LateScope(self.request, before):
                assert await resumed(coroutine, waiting_on) == "done"

    def names(self) -> dict[int, str]:
        return {id(self.request): "request"} | {
            id(scope): f"scope {i}" for i, scope in enumerate(self.scopes)
        }


@pytest.mark.parametrize("holds", [_nothing, _a_task_group, _a_timeout_in_a_shield], ids=lambda h: h.__name__)
@pytest.mark.parametrize("outer", [False, True], ids=["bare task", "task in a scope"])
async def test_a_scope_entered_late_sits_where_one_entered_first_would(holds: _Holds, outer: bool) -> None:
    shapes: dict[str, list[Any]] = {}
    for how in ("first", "late"):
        held = _Held(holds, outer)
        task = asyncio.ensure_future(held.run(how))
        with anyio.fail_after(5):
            await held.seen.wait()
        shapes[how] = _shape(task, held.names())
        held.release.set()
        await task
        assert _shape(task, held.names()) == []  # every scope exited, in order
    assert shapes["late"] == shapes["first"]
    assert ("request", "scope 0" if outer else None) == shapes["late"][-2 if outer else -1][:2]


# ---- `resumed`: the rest of an await, from where its first step stopped ----


async def _steps(log: list[str]) -> str:
    try:
        await asyncio.sleep(0)
        log.append("woke")
        await asyncio.sleep(0)
        return "done"
    except asyncio.CancelledError:
        log.append("cancelled")
        return "answered the cancel"
    finally:
        log.append("closed")


async def test_a_resumed_coroutine_is_awaited_from_where_its_first_step_stopped() -> None:
    log: list[str] = []
    coroutine = _steps(log)
    waiting_on = coroutine.send(None)
    assert log == []
    assert await _late_scope.resumed(coroutine, waiting_on) == "done"
    assert log == ["woke", "closed"]


async def test_a_cancel_thrown_at_a_resumed_coroutine_reaches_it() -> None:
    log: list[str] = []

    async def waits() -> str:
        coroutine = _steps(log)
        return await _late_scope.resumed(coroutine, coroutine.send(None))

    task = asyncio.ensure_future(waits())
    await asyncio.sleep(0)  # the task's first step: `_steps` waits at its first sleep
    task.cancel()
    assert await task == "answered the cancel"
    assert log == ["cancelled", "closed"]


def test_closing_a_resumed_await_closes_the_coroutine() -> None:
    log: list[str] = []
    coroutine = _steps(log)
    awaiting = cast("Generator[Any, Any, str]", _late_scope.resumed(coroutine, coroutine.send(None)))
    next(awaiting)
    awaiting.close()
    assert log == ["closed"]
    assert coroutine.cr_frame is None  # finished
