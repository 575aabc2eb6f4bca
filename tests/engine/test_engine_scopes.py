"""Scopes: app-scoped values are computed once and shared until the host closes its AppScope."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest
from engine_questions import Confirm
from inline_snapshot import snapshot

from mcpdi.engine import (
    Adapter,
    Answer,
    AppScope,
    CleanupError,
    Edge,
    InvalidSignature,
    MissingArgument,
    NeedsInput,
    Resolve,
    ResolverError,
    compile_plan,
)

pytestmark = pytest.mark.anyio

log: list[str] = []


async def pool() -> AsyncIterator[str]:
    log.append("open pool")
    yield f"pool#{log.count('open pool')}"
    log.append("close pool")


def settings() -> dict[str, int]:
    log.append("settings")
    return {"size": 2}


def client(
    p: Annotated[str, Resolve(pool, scope="app")],
    s: Annotated[dict[str, int], Resolve(settings, scope="app")],
) -> str:
    log.append("client")
    return f"{p} x{s['size']}"


async def lookup(title: str, c: Annotated[str, Resolve(client, scope="app")]) -> str:
    return f"{title} via {c}"


async def count(
    c: Annotated[str, Resolve(client, scope="app")], p: Annotated[str, Resolve(pool, scope="app")]
) -> str:
    return f"{c} / {p}"


async def test_an_app_scoped_value_is_computed_once_for_every_call_and_plan_sharing_the_scope() -> None:
    log.clear()
    scope = AppScope()
    first, second = compile_plan(lookup), compile_plan(count)
    context = {AppScope: scope}
    assert await first.run({"title": "Dune"}, context) == "Dune via pool#1 x2"
    assert await first.run({"title": "Emma"}, context) == "Emma via pool#1 x2"
    assert await second.run({}, context) == "pool#1 x2 / pool#1"
    assert log == ["open pool", "settings", "client"]
    await scope.aclose()
    assert log[-1] == "close pool"
    assert scope.values == {}
    assert await second.run({}, context) == "pool#2 x2 / pool#2", "after closing, values are computed afresh"
    await scope.aclose()


async def test_concurrent_first_calls_compute_an_app_scoped_value_once() -> None:
    started = anyio.Event()
    release = anyio.Event()
    made: list[int] = []

    async def slow_pool() -> int:
        made.append(1)
        started.set()
        await release.wait()
        return len(made)

    async def use(p: Annotated[int, Resolve(slow_pool, scope="app")]) -> int:
        return p

    plan = compile_plan(use, localns={"slow_pool": slow_pool})
    scope = AppScope()
    results: list[int] = []

    async def call() -> None:
        results.append(await plan.run({}, {AppScope: scope}))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            group.start_soon(call)
            await started.wait()
            release.set()
    assert results == [1, 1]
    assert made == [1]


async def test_a_plan_with_app_scoped_resolvers_needs_the_scope_in_its_context() -> None:
    with pytest.raises(MissingArgument) as error:
        await compile_plan(lookup).run({"title": "Dune"})
    assert str(error.value) == snapshot("Call of 'lookup' lacks a context value for AppScope")


def fragile() -> Iterator[str]:
    yield "fragile"
    msg = "could not close"
    raise OSError(msg)


async def test_closing_the_scope_reports_a_failing_cleanup_after_running_the_others() -> None:
    async def both(
        f: Annotated[str, Resolve(fragile, scope="app")], p: Annotated[str, Resolve(pool, scope="app")]
    ) -> str:
        return f + p

    log.clear()
    scope = AppScope()
    await compile_plan(both, localns=globals() | {"both": both}).run({}, {AppScope: scope})
    with pytest.raises(CleanupError, match="Cleanup of resolver 'fragile'") as error:
        await scope.aclose()
    assert log == ["open pool", "close pool"]
    assert isinstance(error.value.__cause__, OSError)


def refusal(fn: Any, **options: Any) -> str:
    with pytest.raises(InvalidSignature) as error:
        compile_plan(fn, **options)
    return re.sub(r"\.py:\d+", ".py:N", str(error.value))


class Tenant:
    pass


def per_tenant(tenant: Tenant) -> str:
    return "t"


def per_title(title: str) -> str:
    return title


def round_value() -> str:
    return "r"


def uses_round(r: Annotated[str, Resolve(round_value)]) -> str:
    return r


def mid(t: Annotated[str, Resolve(per_title)]) -> str:
    return t


def by_argument(title: str, v: Annotated[str, Resolve(per_title, scope="app")]) -> str:
    return v


def by_context(v: Annotated[str, Resolve(per_tenant, scope="app")]) -> str:
    return v


def by_resolver(v: Annotated[str, Resolve(uses_round, scope="app")]) -> str:
    return v


def test_an_app_scoped_resolver_may_not_depend_on_anything_of_one_call_and_the_error_names_the_path() -> None:
    assert [
        refusal(by_argument),
        refusal(by_context, context_types=(Tenant,)),
        refusal(by_resolver),
    ] == snapshot(
        [
            "Resolver 'per_title' (tests/engine/test_engine_scopes.py:N) is app-scoped but depends on the call argument 'title' (path: by_argument(v) -> per_title(title)); an app-scoped value is computed once and shared by every call, so it may depend only on other app-scoped resolvers. Drop scope='app', or make what it depends on app-scoped too.",
            "Resolver 'per_tenant' (tests/engine/test_engine_scopes.py:N) is app-scoped but depends on the context value 'tenant' (path: by_context(v) -> per_tenant(tenant)); an app-scoped value is computed once and shared by every call, so it may depend only on other app-scoped resolvers. Drop scope='app', or make what it depends on app-scoped too.",
            "Resolver 'uses_round' (tests/engine/test_engine_scopes.py:N) is app-scoped but depends on the round-scoped resolver 'round_value' (path: by_resolver(v) -> uses_round(r)); an app-scoped value is computed once and shared by every call, so it may depend only on other app-scoped resolvers. Drop scope='app', or make what it depends on app-scoped too.",
        ]
    )


def mixed(
    a: Annotated[str, Resolve(round_value, scope="app")], b: Annotated[str, Resolve(round_value)]
) -> str:
    return a + b


def unknown(a: Annotated[str, Resolve(round_value, scope="request")]) -> str:  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    return a


def test_one_resolver_has_one_scope_and_a_scope_is_one_of_three() -> None:
    assert [refusal(mixed), refusal(unknown)] == snapshot(
        [
            "Resolver 'round_value' (tests/engine/test_engine_scopes.py:N) has scope='app' for parameter 'a' of 'mixed' but scope='round' for parameter 'b' of 'mixed'; a resolver's value lives one way. Use the same scope on every Resolve(...) of it.",
            "Parameter 'a' of 'unknown' (tests/engine/test_engine_scopes.py:N) has Resolve(round_value, scope='request'); a scope is 'round' (the default), 'call' or 'app'.",
        ]
    )


async def test_an_app_scoped_resolver_never_asks_its_value_is_kept_as_is() -> None:
    plan = compile_plan(lookup)
    assert [(s.name, s.scope, s.may_ask) for s in plan.steps] == [
        ("pool", "app", False),
        ("settings", "app", False),
        ("client", "app", False),
    ]


quotes: list[int] = []


def quote() -> int:
    quotes.append(100 + len(quotes))  # a price that changes every time it is asked for
    return quotes[-1]


def confirm_price(price: Annotated[int, Resolve(quote, scope="call")]) -> Any:
    return Confirm(f"Pay {price} EUR?")


async def buy(
    price: Annotated[int, Resolve(quote, scope="call")], ok: Annotated[bool, Resolve(confirm_price)]
) -> str:
    return f"paid {price}" if ok else "not paid"


async def test_a_call_scoped_value_is_handed_out_with_the_questions_and_back_instead_of_recomputed() -> None:
    quotes.clear()
    plan = compile_plan(buy)
    first = await plan.run({})
    assert isinstance(first, NeedsInput)
    assert first.kept == {plan.steps[0].key: 100}
    answers = {a.key: Answer(a.digest, "yes") for a in first.questions}
    kept = {key: Answer.kept(value) for key, value in first.kept.items()}
    assert await plan.run({}, answers=answers | kept) == "paid 100"
    assert quotes == [100], "computed once for the whole call"
    again = await plan.run({}, answers=answers)  # without the kept value: a new price, a new question
    assert isinstance(again, NeedsInput)
    assert again.questions[0].question.render() == {"text": "Pay 101 EUR?"}


adapted: list[int] = []


def base_price() -> int:
    return 100


def total(base: Annotated[int, Resolve(base_price)]) -> int:
    quotes.append(base)
    return base


def confirm_paying() -> Any:
    return Confirm("Pay?")


async def buy_in_cents(
    t: Annotated[int, Resolve(total, scope="call")], ok: Annotated[bool, Resolve(confirm_paying)]
) -> str:
    return f"paid {t} cents" if ok else "not paid"


def in_cents(edge: Edge) -> Adapter | None:
    def adapt(value: int) -> int:
        adapted.append(value)
        return value * 100

    return Adapter(plain=adapt) if edge.consumer == "total" else None


async def test_a_kept_call_scoped_value_is_not_adapted_again_and_its_rounds_run_in_generated_code() -> None:
    quotes.clear()
    adapted.clear()
    plan = compile_plan(buy_in_cents, adapt=in_cents)
    assert "ask, 0, [_UNSET]" not in plan.source, "not handed to the interpreter whole"
    first = await plan.run({})
    assert isinstance(first, NeedsInput)
    assert (adapted, quotes) == ([100], [10000])
    answers = {a.key: Answer(a.digest, "yes") for a in first.questions}
    kept = {key: Answer.kept(value) for key, value in first.kept.items()}
    assert await plan.run({}, answers=answers | kept) == "paid 10000 cents"
    assert (adapted, quotes) == ([100], [10000]), "the kept value is neither adapted nor computed again"


def session() -> Iterator[str]:
    yield "s"


def call_session(s: Annotated[str, Resolve(session, scope="call")]) -> str:
    return s


def test_a_call_scoped_resolver_cannot_clean_up() -> None:
    assert refusal(call_session) == snapshot(
        "Resolver 'session' (tests/engine/test_engine_scopes.py:N) cleans up after `yield` but is call-scoped; a call-scoped value is carried to later rounds, long after the cleanup of the round that made it. Return the value instead, or keep the default scope."
    )


def maybe_confirm(ask: bool, c: Annotated[str, Resolve(client, scope="app")]) -> Any:
    return Confirm(f"use {c}?") if ask else True


def broken_pool() -> str:
    msg = "no database"
    raise ConnectionError(msg)


def maybe_confirm_broken(ask: bool) -> Any:
    return Confirm("go?") if ask else True


async def uses_broken(
    ask: bool,
    ok: Annotated[bool, Resolve(maybe_confirm_broken)],
    p: Annotated[str, Resolve(broken_pool, scope="app")],
) -> str:
    return p


async def with_question(
    ask: bool, ok: Annotated[bool, Resolve(maybe_confirm)], c: Annotated[str, Resolve(client, scope="app")]
) -> tuple[bool, str]:
    return ok, c


async def say_yes(asked: Any) -> str:
    return "yes"


async def test_app_scoped_steps_give_the_same_values_and_errors_on_the_generated_and_the_resumed_path() -> (
    None
):
    log.clear()
    scope = AppScope()
    plan = compile_plan(with_question)
    assert "_app_value(" in plan.source, "app-scoped steps stay on the generated path"
    context = {AppScope: scope}
    straight = await plan.run({"ask": False}, context)
    first = await plan.run({"ask": True}, context)
    assert isinstance(first, NeedsInput)
    answers = {a.key: Answer(a.digest, "yes") for a in first.questions}
    assert straight == await plan.run({"ask": True}, context, answers) == (True, "pool#1 x2")
    assert log == ["open pool", "settings", "client"]

    broken = compile_plan(uses_broken)
    errors: list[tuple[str, type[BaseException | None]]] = []
    for ask in (False, True):
        try:
            await broken.run({"ask": ask}, context, None, say_yes)
        except ResolverError as error:
            errors.append((error.step.name, type(error.__cause__)))
    assert errors == [("broken_pool", ConnectionError)] * 2
    await scope.aclose()
