"""Cleanup resolvers: the value at `yield` is injected, the rest runs when the round ends."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Generator, Iterator, Mapping
from typing import Annotated, Any

import anyio
import pytest

from mcpdi.engine import (
    Answer,
    CleanupError,
    NeedsInput,
    Question,
    Resolve,
    ResolverError,
    RoundOutcome,
    compile_plan,
)

pytestmark = pytest.mark.anyio

log: list[Any] = []


def connection() -> Generator[str, RoundOutcome]:
    log.append("open connection")
    try:
        outcome = yield "conn"
        log.append(("connection", outcome))
    except Exception as error:
        log.append(("connection failed", type(error).__name__))
        raise


def inline_cursor(conn: Annotated[str, Resolve(connection)]) -> Iterator[str]:
    log.append("open cursor")
    yield f"cursor on {conn}"
    log.append("close cursor")


async def transaction(conn: Annotated[str, Resolve(connection)]) -> AsyncGenerator[str, RoundOutcome]:
    log.append("begin")
    try:
        outcome = yield "tx"
    except BaseException as error:
        await anyio.lowlevel.checkpoint()  # cleanup may await, even when cancelled
        log.append(("rollback", type(error).__name__))
        raise
    log.append(("commit", outcome))


@contextlib.contextmanager
def lock() -> Generator[str]:
    log.append("lock")
    try:
        yield "locked"
    finally:
        log.append("unlock")


@contextlib.asynccontextmanager
async def span() -> AsyncGenerator[str]:
    log.append("span start")
    try:
        yield "span"
    except Exception as error:
        log.append(("span error", type(error).__name__))
        raise
    else:
        log.append("span end")


async def save(
    order: str,
    conn: Annotated[str, Resolve(connection)],
    cursor: Annotated[str, Resolve(inline_cursor, inline=True)],
    tx: Annotated[str, Resolve(transaction)],
    held: Annotated[str, Resolve(lock)],
    traced: Annotated[str, Resolve(span)],
) -> str:
    log.append("body")
    if order == "fail":
        msg = "no such order"
        raise LookupError(msg)
    return f"{order}: {conn} {cursor} {tx} {held} {traced}"


async def test_values_at_yield_are_injected_and_cleanup_runs_after_the_body_in_reverse_order() -> None:
    log.clear()
    plan = compile_plan(save)
    assert await plan.run({"order": "o1"}) == "o1: conn cursor on conn tx locked span"
    assert log == [
        "open connection",
        "open cursor",
        "begin",
        "lock",
        "span start",
        "body",
        "span end",
        "unlock",
        ("commit", RoundOutcome.COMPLETED),
        "close cursor",
        ("connection", RoundOutcome.COMPLETED),
    ]


async def test_when_the_body_raises_the_error_is_thrown_in_and_every_cleanup_runs() -> None:
    log.clear()
    plan = compile_plan(save)
    with pytest.raises(LookupError, match="no such order"):
        await plan.run({"order": "fail"})
    assert log[log.index("body") :] == [
        "body",
        ("span error", "LookupError"),
        "unlock",
        ("rollback", "LookupError"),
        ("connection failed", "LookupError"),
    ]
    assert "close cursor" not in log, "an exception is thrown in at the yield; the cursor did not catch it"


def broken_stock() -> int:
    msg = "stock service down"
    raise ConnectionError(msg)


async def fails_after_setup(
    conn: Annotated[str, Resolve(connection)], stock: Annotated[int, Resolve(broken_stock, inline=True)]
) -> str:
    return conn


async def test_when_a_later_resolver_raises_the_entered_cleanups_see_the_resolver_error() -> None:
    log.clear()
    with pytest.raises(ResolverError) as error:
        await compile_plan(fails_after_setup).run({})
    assert error.value.step.name == "broken_stock"
    assert log == ["open connection", ("connection failed", "ResolverError")]


async def test_a_cancelled_call_still_runs_cleanup_even_when_it_awaits() -> None:
    started = anyio.Event()

    async def slow(tx: Annotated[str, Resolve(transaction)]) -> str:
        started.set()
        await anyio.sleep_forever()
        return tx

    plan = compile_plan(slow, localns={"transaction": transaction})

    async def run_until_cancelled() -> None:
        await plan.run({})

    log.clear()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(run_until_cancelled)
            await started.wait()
            group.cancel_scope.cancel()
    # `connection` catches Exception only, and the cancellation is not one: it closes silently.
    assert log == ["open connection", "begin", ("rollback", "CancelledError")]


class Ask(Question):
    def render(self) -> Mapping[str, Any]:
        return {"ask": "go on?"}


def asks(conn: Annotated[str, Resolve(connection)]) -> Any:
    return Ask()


async def asking(conn: Annotated[str, Resolve(connection)], go: Annotated[Any, Resolve(asks)]) -> str:
    return f"{conn} {go}"


async def test_a_round_that_ends_with_questions_closes_with_suspended_and_the_next_round_completes() -> None:
    log.clear()
    plan = compile_plan(asking)
    first = await plan.run({})
    assert isinstance(first, NeedsInput)
    assert log == ["open connection", ("connection", RoundOutcome.SUSPENDED)]
    log.clear()
    answers = {a.key: Answer(a.digest, "yes") for a in first.questions}
    assert await plan.run({}, answers=answers) == "conn yes"
    assert log == ["open connection", ("connection", RoundOutcome.COMPLETED)]


def cleanup_fails(name: str) -> Iterator[str]:
    try:
        yield name
    finally:
        log.append(f"failing {name}")
        msg = f"cannot close {name}"
        raise OSError(msg)  # a cleanup that fails, whatever the round did


def first_resource() -> Iterator[str]:
    yield from cleanup_fails("first")


def second_resource() -> Iterator[str]:
    yield from cleanup_fails("second")


async def two_resources(
    a: Annotated[str, Resolve(first_resource)],
    b: Annotated[str, Resolve(second_resource)],
    c: Annotated[str, Resolve(lock)],
    fail: bool = False,
) -> str:
    if fail:
        msg = "body failed"
        raise ValueError(msg)
    return a + b + c


async def test_a_failing_cleanup_does_not_stop_the_others_is_logged_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log.clear()
    plan = compile_plan(two_resources)
    with caplog.at_level(logging.ERROR, logger="mcpdi.engine"), pytest.raises(CleanupError) as error:
        await plan.run({})
    assert log == ["lock", "unlock", "failing second", "failing first"]
    assert (
        str(error.value)
        == "Cleanup of resolver 'second_resource' (for parameter 'b') raised OSError: cannot close second"
    )
    assert error.value.step.name == "second_resource"
    assert [str(e) for e in error.value.errors] == ["cannot close second", "cannot close first"]
    assert isinstance(error.value, ResolverError)
    assert [r.getMessage() for r in caplog.records] == [
        "Cleanup of resolver 'second_resource' failed",
        "Cleanup of resolver 'first_resource' failed",
    ]


async def test_after_a_failed_body_a_failing_cleanup_is_noted_on_the_bodys_error() -> None:
    plan = compile_plan(two_resources)
    with pytest.raises(ValueError, match="body failed") as error:
        await plan.run({"fail": True})
    assert error.value.__notes__ == [
        "Cleanup of resolver 'second_resource' also failed: OSError: cannot close second",
        "Cleanup of resolver 'first_resource' also failed: OSError: cannot close first",
    ]


def never_yields() -> Iterator[str]:
    return
    yield "unreachable"


def yields_twice() -> Iterator[str]:
    yield "one"
    yield "two"


async def test_a_generator_must_yield_exactly_once() -> None:
    async def no_value(v: Annotated[str, Resolve(never_yields)]) -> str:
        return v

    async def two_values(v: Annotated[str, Resolve(yields_twice)]) -> str:
        return v

    namespace = {"never_yields": never_yields, "yields_twice": yields_twice}
    with pytest.raises(ResolverError, match="returned without yielding a value"):
        await compile_plan(no_value, localns=namespace).run({})
    with pytest.raises(CleanupError, match="yielded a second time while cleaning up"):
        await compile_plan(two_values, localns=namespace).run({})


def test_plans_with_cleanup_resolvers_run_in_generated_code_that_enters_and_closes_them() -> None:
    async def plain(order: str) -> str:
        return order

    handed_over_whole = "_resume(_PLAN, collect, arguments, context, answers, ask, 0,"
    assert handed_over_whole not in compile_plan(plain).source
    source = compile_plan(save).source
    assert handed_over_whole not in source
    entering = source.count("= await _enter(_STEPS[") + source.count(".__anext__()")
    assert entering == 5  # every cleanup resolver of `save`, async generators written out
    assert "await _close(entered, error, _COMPLETED)" in source
