"""Opt-in concurrency: independent async resolvers marked concurrent=True run at the same time."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

import anyio
import pytest
from inline_snapshot import snapshot

from mcpdi.engine import InvalidSignature, NeedsInput, Question, Resolve, ResolverError, compile_plan

pytestmark = pytest.mark.anyio

log: list[str] = []
left_ready = anyio.Event()
right_ready = anyio.Event()


async def left() -> str:
    # Waits for `right`: only finishes when both run at the same time.
    left_ready.set()
    await right_ready.wait()
    log.append("left")
    return "L"


async def right() -> str:
    right_ready.set()
    await left_ready.wait()
    log.append("right")
    return "R"


async def both(
    a: Annotated[str, Resolve(left, concurrent=True)], b: Annotated[str, Resolve(right, concurrent=True)]
) -> str:
    return a + b


async def test_independent_concurrent_resolvers_run_at_the_same_time() -> None:
    global left_ready, right_ready  # fresh events per test run
    left_ready, right_ready = anyio.Event(), anyio.Event()
    log.clear()
    with anyio.fail_after(5):  # one after the other, each would wait for the other forever
        assert await compile_plan(both).run({}) == "LR"


async def first(title: str) -> str:
    log.append("first")
    return title


async def second(f: Annotated[str, Resolve(first, concurrent=True)]) -> str:
    log.append("second")
    return f + "!"


async def chained(
    title: str,
    f: Annotated[str, Resolve(first, concurrent=True)],
    s: Annotated[str, Resolve(second, concurrent=True)],
) -> str:
    return s


async def test_a_concurrent_resolver_still_waits_for_the_resolvers_it_depends_on() -> None:
    log.clear()
    assert await compile_plan(chained).run({"title": "Dune"}) == "Dune!"
    assert log == ["first", "second"]


async def fails_a() -> str:
    await anyio.lowlevel.checkpoint()
    msg = "a is down"
    raise ConnectionError(msg)


async def fails_b() -> str:
    msg = "b is down"
    raise TimeoutError(msg)


async def both_fail(
    a: Annotated[str, Resolve(fails_a, concurrent=True)], b: Annotated[str, Resolve(fails_b, concurrent=True)]
) -> str:
    return a + b


async def test_with_several_failures_the_first_in_run_order_is_raised_and_the_others_noted() -> None:
    with pytest.raises(ResolverError) as error:
        await compile_plan(both_fail).run({})
    assert error.value.step.name == "fails_a"
    assert isinstance(error.value.__cause__, ConnectionError)
    assert error.value.__notes__ == [
        "Resolver 'fails_b', run at the same time, also raised TimeoutError: b is down"
    ]


class Ask(Question):
    def render(self) -> Mapping[str, Any]:
        return {"ask": "sure?"}


async def asks() -> Any:
    return Ask()


async def plain() -> str:
    return "plain"


async def asks_and_plain(
    a: Annotated[Any, Resolve(asks, concurrent=True)], p: Annotated[str, Resolve(plain, concurrent=True)]
) -> str:
    return f"{a} {p}"


async def test_a_question_from_a_concurrent_resolver_is_asked_like_any_other() -> None:
    first_round = await compile_plan(asks_and_plain).run({})
    assert isinstance(first_round, NeedsInput)
    assert [a.step.name for a in first_round.questions] == ["asks"]


def sync_one() -> str:
    return "s"


def sync_concurrent(s: Annotated[str, Resolve(sync_one, concurrent=True)]) -> str:
    return s


def mixed_flags(a: Annotated[str, Resolve(plain, concurrent=True)], b: Annotated[str, Resolve(plain)]) -> str:
    return a + b


def test_only_async_resolvers_of_the_default_scope_can_be_concurrent_and_one_flag_per_resolver() -> None:
    texts: list[str] = []
    for fn in (sync_concurrent, mixed_flags):
        with pytest.raises(InvalidSignature) as error:
            compile_plan(fn)
        texts.append(re.sub(r"\.py:\d+", ".py:N", str(error.value)))
    assert texts == snapshot(
        [
            "Resolver 'sync_one' (tests/engine/test_engine_concurrency.py:N) is marked concurrent=True but is not a plain async function of the default scope; only those run together with others. Make it `async def` returning its value, or drop concurrent=True.",
            "Resolver 'plain' (tests/engine/test_engine_concurrency.py:N) is marked concurrent=True for parameter 'a' of 'mixed_flags' but concurrent=False for parameter 'b' of 'mixed_flags'. Use the same flag on every Resolve(...) of it.",
        ]
    )


ran: list[str] = []


async def asks_once() -> Any:
    ran.append("asks_once")
    return Ask()


async def counted():  # unannotated: it may ask, so it runs together with a step that asks
    ran.append("counted")
    return "counted"


async def asks_and_counted(
    a: Annotated[Any, Resolve(asks_once, concurrent=True)],
    c: Annotated[Any, Resolve(counted, concurrent=True)],
) -> str:
    return f"{a} {c}"


async def test_a_question_from_one_concurrent_resolver_keeps_the_values_of_those_run_with_it() -> None:
    plan = compile_plan(asks_and_counted)
    assert "_run_together(" in plan.source  # the generated code runs the batch itself

    async def answer(asked: Any) -> Any:
        return "yes"

    ran.clear()
    assert await plan.run({}, ask=answer) == "yes counted"
    assert ran == ["asks_once", "counted"]  # the interpreter finishes the round, running neither again
    ran.clear()
    first_round = await plan.run({})
    assert isinstance(first_round, NeedsInput)
    assert [a.step.name for a in first_round.questions] == ["asks_once"]
    assert ran == ["asks_once", "counted"]
