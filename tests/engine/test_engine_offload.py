"""Offloaded sync resolvers: the consecutive ones of a round, and a sync root, share one thread call."""

from __future__ import annotations

import contextvars
import threading
import traceback
from collections.abc import Generator, Mapping
from typing import Annotated, Any

import anyio
import anyio.to_thread
import pytest

from mcpdi.engine import (
    Answer,
    AppScope,
    NeedsInput,
    Question,
    Resolve,
    ResolverError,
    RoundOutcome,
    compile_plan,
)
from mcpdi.engine._compile import instrument_plan

pytestmark = pytest.mark.anyio


class Hops:
    """Every `anyio.to_thread.run_sync` call of a test, and the threads the resolvers ran on."""

    def __init__(self) -> None:
        self.calls = 0
        self.threads: dict[str, int] = {}

    def ran(self, name: str, value: Any = None) -> Any:
        """Note the thread `name` runs on; `value` back, for one-line resolvers."""
        self.threads[name] = threading.get_ident()
        return value


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> Hops:
    seen = Hops()
    original = anyio.to_thread.run_sync

    async def counted(fn: Any, *args: Any, **options: Any) -> Any:
        seen.calls += 1
        return await original(fn, *args, **options)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return seen


class Go(Question):
    def render(self) -> Mapping[str, Any]:
        return {"go": True}

    def resolve_answer(self, payload: Any) -> Any:
        return payload


def chain_plan(hops: Hops, *, fail: str | None = None) -> Any:
    """`a -> b -> c` and a sync root, all offloaded; `fail` names the one that raises."""

    def step(name: str, value: int) -> int:
        hops.ran(name)
        if name == fail:
            msg = f"{name} is broken"
            raise LookupError(msg)
        return value

    def a(title: str) -> int:
        return step("a", len(title))

    def b(x: Annotated[int, Resolve(a)]) -> int:
        return step("b", x + 1)

    def c(x: Annotated[int, Resolve(b)]) -> int:
        return step("c", x + 1)

    def tool(title: str, x: Annotated[int, Resolve(c)], y: Annotated[int, Resolve(a)]) -> str:
        step("tool", 0)
        return f"{title}:{x}:{y}"

    return compile_plan(tool, localns=locals())


async def test_consecutive_sync_resolvers_and_a_sync_root_share_one_worker_thread_call(hops: Hops) -> None:
    plan = chain_plan(hops)
    assert await plan.run({"title": "Dune"}) == "Dune:6:4"
    assert hops.calls == 1
    assert set(hops.threads) == {"a", "b", "c", "tool"}
    assert len(set(hops.threads.values())) == 1
    assert threading.get_ident() not in hops.threads.values()


async def test_resolve_collects_the_values_of_the_hop_without_calling_the_root(hops: Hops) -> None:
    plan = chain_plan(hops)
    assert await plan.resolve({"title": "Dune"}) == {"title": "Dune", "x": 6, "y": 4}
    assert hops.calls == 1
    assert "tool" not in hops.threads


@pytest.mark.parametrize("failing", ["a", "b", "c"])
async def test_a_failing_resolver_in_a_hop_is_named_and_nothing_after_it_runs(
    hops: Hops, failing: str
) -> None:
    plan = chain_plan(hops, fail=failing)
    with pytest.raises(ResolverError) as error:
        await plan.run({"title": "Dune"})
    assert error.value.step.name == failing
    assert isinstance(error.value.__cause__, LookupError)
    assert (
        str(error.value)
        == f"Resolver {failing!r} (for parameter 'x') raised LookupError: {failing} is broken"
    )
    assert list(hops.threads) == ["a", "b", "c"][: "abc".index(failing) + 1]


async def test_a_failing_root_in_a_hop_raises_its_own_exception_unchanged(hops: Hops) -> None:
    plan = chain_plan(hops, fail="tool")
    with pytest.raises(LookupError, match="tool is broken"):
        await plan.run({"title": "Dune"})
    assert hops.calls == 1


async def test_a_traceback_through_a_hop_shows_its_generated_lines_under_the_plans_file(hops: Hops) -> None:
    plan = chain_plan(hops, fail="b")
    with pytest.raises(ResolverError) as error:
        await plan.run({"title": "Dune"})
    frames = [
        (f.filename, f.name, f.line)
        for f in traceback.extract_tb(error.value.__traceback__)
        if f.filename.startswith("<mcpdi plan")
    ]
    assert frames == [
        (
            "<mcpdi plan chain_plan.<locals>.tool>",
            "chain_plan.<locals>.tool",
            "v0, v1, v2, result = await _offload_hop(_hop0, collect, a0)",
        ),
        (
            "<mcpdi plan chain_plan.<locals>.tool>",
            "chain_plan.<locals>.tool._hop0",
            "raise _resolver_error(_STEPS[0:3], [v0, v1, v2], error) from error",
        ),
    ]


async def test_an_async_step_between_sync_ones_splits_the_round_into_two_hops(hops: Hops) -> None:
    loop_thread = threading.get_ident()

    def a(title: str) -> int:
        return hops.ran("a", 1)

    def b(x: Annotated[int, Resolve(a)]) -> int:
        return hops.ran("b", x + 1)

    async def middle(x: Annotated[int, Resolve(b)]) -> int:
        return hops.ran("middle", x + 1)

    def d(x: Annotated[int, Resolve(middle)]) -> int:
        return hops.ran("d", x + 1)

    def tool(title: str, x: Annotated[int, Resolve(d)]) -> int:
        return hops.ran("tool", x)

    plan = compile_plan(tool, localns=locals())
    assert await plan.run({"title": "Dune"}) == 4
    assert hops.calls == 2
    assert hops.threads["middle"] == loop_thread
    assert hops.threads["a"] == hops.threads["b"] != loop_thread
    assert hops.threads["d"] == hops.threads["tool"] != loop_thread


async def test_an_inline_resolver_ends_a_hop_and_runs_on_the_loop(hops: Hops) -> None:
    def a(title: str) -> int:
        return hops.ran("a", 1)

    def quick(x: Annotated[int, Resolve(a)]) -> int:
        return hops.ran("quick", x + 1)

    def c(x: Annotated[int, Resolve(quick, inline=True)]) -> int:
        return hops.ran("c", x + 1)

    async def tool(title: str, x: Annotated[int, Resolve(c)], y: Annotated[int, Resolve(a)]) -> int:
        return x + y

    plan = compile_plan(tool, localns=locals())
    assert await plan.run({"title": "Dune"}) == 4
    assert hops.calls == 2  # a alone, then c (an async root cannot join)
    assert hops.threads["quick"] == threading.get_ident()


async def test_a_sync_resolver_that_asks_ends_the_hop_and_nothing_it_would_prevent_runs(hops: Hops) -> None:
    charged: list[int] = []

    def price(title: str) -> int:
        return hops.ran("price", 100)

    def confirm(amount: Annotated[int, Resolve(price)]) -> Go | bool:
        return hops.ran("confirm", Go())

    def charge(amount: Annotated[int, Resolve(price)]) -> int:  # cannot ask: waits for the final round
        charged.append(amount)
        return amount

    def tool(title: str, ok: Annotated[bool, Resolve(confirm)], paid: Annotated[int, Resolve(charge)]) -> str:
        return hops.ran("tool", f"{ok}:{paid}")

    plan = compile_plan(tool, localns=locals())
    assert [s.name for s in plan.steps] == ["price", "confirm", "charge"]
    pending = await plan.run({"title": "Dune"})
    assert isinstance(pending, NeedsInput)
    assert [q.step.name for q in pending.questions] == ["confirm"]
    assert charged == []
    assert "tool" not in hops.threads
    assert hops.calls == 1
    answers = {q.key: Answer(q.digest, True) for q in pending.questions}
    hops.calls = 0
    assert await plan.run({"title": "Dune"}, answers=answers) == "True:100"
    assert charged == [100]
    # price and confirm in one hop; after the answer, charge and the root in another
    assert hops.calls == 2


async def test_the_round_after_an_answer_runs_the_remaining_sync_steps_in_one_hop(hops: Hops) -> None:
    async def ask() -> Go | int:
        return Go()

    def a(x: Annotated[int, Resolve(ask)]) -> int:
        return hops.ran("a", x + 1)

    def b(x: Annotated[int, Resolve(a)]) -> int:
        return hops.ran("b", x + 1)

    def tool(x: Annotated[int, Resolve(b)]) -> int:
        return hops.ran("tool", x)

    plan = compile_plan(tool, localns=locals())
    pending = await plan.run({})
    assert isinstance(pending, NeedsInput)
    assert hops.calls == 0
    answers = {q.key: Answer(q.digest, 40) for q in pending.questions}
    assert await plan.run({}, answers=answers) == 42
    assert hops.calls == 1  # the interpreter finishes the round: a, b and the root share a hop


async def test_a_failing_resolver_in_a_hop_of_the_interpreter_is_named_too(hops: Hops) -> None:
    async def ask() -> Go | int:
        return Go()

    def a(x: Annotated[int, Resolve(ask)]) -> int:
        return x + 1

    def b(x: Annotated[int, Resolve(a)]) -> int:
        raise KeyError(x)

    def tool(x: Annotated[int, Resolve(b)]) -> int:
        return hops.ran("tool", x)

    plan = compile_plan(tool, localns=locals())
    pending = await plan.run({})
    assert isinstance(pending, NeedsInput)
    with pytest.raises(ResolverError) as error:
        await plan.run({}, answers={q.key: Answer(q.digest, 1) for q in pending.questions})
    assert error.value.step.name == "b"
    assert isinstance(error.value.__cause__, KeyError)
    assert hops.threads == {}


async def cancel_while_blocked(
    plan: Any, arguments: Mapping[str, Any], started: threading.Event, release: threading.Event
) -> None:
    """Run a round, cancel it once a resolver set `started`, then let that resolver return."""

    async def call() -> None:
        await plan.run(arguments)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.to_thread.run_sync(started.wait, 5)
            group.cancel_scope.cancel()
            release.set()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_call_cancelled_while_a_resolver_runs_starts_no_further_step(
    hops: Hops, anyio_backend: str
) -> None:
    started = threading.Event()
    release = threading.Event()
    log: list[str] = []

    def slow(title: str) -> int:
        log.append("slow")
        started.set()
        release.wait(5)
        return 1

    def after(x: Annotated[int, Resolve(slow)]) -> int:
        log.append("after")
        return x

    def tool(title: str, x: Annotated[int, Resolve(after)]) -> int:
        log.append("tool")
        return x

    await cancel_while_blocked(compile_plan(tool, localns=locals()), {"title": "Dune"}, started, release)
    assert log == ["slow"]


async def test_each_resolver_of_a_hop_sees_the_callers_context_and_not_the_one_before_it(hops: Hops) -> None:
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")
    seen: list[str] = []

    def first() -> int:
        seen.append(request.get())
        request.set("changed by first")
        return 1

    def second(x: Annotated[int, Resolve(first)]) -> int:
        seen.append(request.get())
        return x

    def tool(x: Annotated[int, Resolve(second)]) -> str:
        return request.get()

    plan = compile_plan(tool, localns=locals())
    request.set("set by the caller")
    assert await plan.run({}) == "set by the caller"
    assert seen == ["set by the caller", "set by the caller"]
    assert hops.calls == 1


async def test_an_instrumented_plan_runs_its_wrappers_inside_the_hop(hops: Hops) -> None:
    plan = chain_plan(hops)
    wrapped: list[tuple[str, int]] = []

    def wrap(step: Any) -> Any:
        fn = step.fn

        def traced(*args: Any, **kwargs: Any) -> Any:
            wrapped.append((step.name, threading.get_ident()))
            return fn(*args, **kwargs)

        return traced

    instrumented = instrument_plan(plan, wrap)
    assert await instrumented.run({"title": "Dune"}) == "Dune:6:4"
    assert [name for name, _ in wrapped] == ["a", "b", "c"]
    assert {thread for _, thread in wrapped} == {hops.threads["tool"]}
    assert hops.calls == 1


async def test_app_scoped_and_cleanup_resolvers_run_in_hops_of_their_own(hops: Hops) -> None:
    log: list[Any] = []

    def settings() -> str:
        log.append("settings")
        return "s"

    def session(s: Annotated[str, Resolve(settings, scope="app")]) -> Generator[str, RoundOutcome]:
        outcome = yield s + "!"
        log.append(outcome)

    def a(s: Annotated[str, Resolve(session)]) -> str:
        return s + "a"

    def b(x: Annotated[str, Resolve(a)]) -> str:
        return x + "b"

    def tool(x: Annotated[str, Resolve(b)]) -> str:
        return x

    plan = compile_plan(tool, localns=locals())
    scope = AppScope()
    assert await plan.run({}, {AppScope: scope}) == "s!ab"
    # settings; entering session; a, b and the root; closing session
    assert hops.calls == 4
    hops.calls = 0
    assert await plan.run({}, {AppScope: scope}) == "s!ab"
    assert hops.calls == 3  # the app-scoped value is kept
    assert log == ["settings", RoundOutcome.COMPLETED, RoundOutcome.COMPLETED]
    await scope.aclose()


async def test_a_concurrent_group_between_sync_steps_runs_on_the_loop_between_two_hops(hops: Hops) -> None:
    def a(title: str) -> int:
        return 1

    def b(x: Annotated[int, Resolve(a)]) -> int:
        return x + 1

    async def left(x: Annotated[int, Resolve(b)]) -> int:
        await anyio.sleep(0)
        return x * 10

    async def right(x: Annotated[int, Resolve(b)]) -> int:
        await anyio.sleep(0)
        return x * 100

    def c(
        x: Annotated[int, Resolve(left, concurrent=True)], y: Annotated[int, Resolve(right, concurrent=True)]
    ) -> int:
        return x + y

    def d(x: Annotated[int, Resolve(c)]) -> int:
        return x + 1

    def tool(title: str, x: Annotated[int, Resolve(d)]) -> int:
        return x

    plan = compile_plan(tool, localns=locals())
    assert await plan.run({"title": "Dune"}) == 221
    assert hops.calls == 2


async def test_a_call_cancelled_in_a_hop_after_a_cleanup_resolver_closes_it_with_the_cancellation(
    hops: Hops,
) -> None:
    started = threading.Event()
    release = threading.Event()
    log: list[Any] = []

    def session() -> Generator[str, RoundOutcome]:
        try:
            yield "s"
        except BaseException as error:
            log.append(("closed by", type(error).__name__))
            raise

    def slow(s: Annotated[str, Resolve(session)]) -> str:
        started.set()
        release.wait(5)
        return hops.ran("slow", s)

    def after(s: Annotated[str, Resolve(slow)]) -> str:
        return hops.ran("after", s)

    def tool(s: Annotated[str, Resolve(after)]) -> str:
        return hops.ran("tool", s)

    await cancel_while_blocked(compile_plan(tool, localns=locals()), {}, started, release)
    assert list(hops.threads) == ["slow"]
    assert log == [("closed by", "CancelledError")]
