"""The author's order decides: steps before a question run before it is put (checks first), steps
that cannot ask and come after a pending question wait for its answer (consent before side
effects), and a refused answer ends the round before anything else runs or is asked."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from engine_questions import Confirm

from mcpdi.engine import Adapter, Answer, Asked, Edge, NeedsInput, Resolve, ResolverError, compile_plan

pytestmark = pytest.mark.anyio


class Refused(Exception):
    pass


def refuse_no(edge: Edge) -> Adapter:
    """Like the MCP layer's adapter for a declined elicitation: a "no" ends the call."""

    def check(value: Any) -> Any:
        if value is not True:
            raise Refused(edge.provider.name)
        return value

    return Adapter(answered=check)


log: list[str] = []


async def amount() -> int:
    log.append("amount")
    return 100


async def confirm_payment(total: Annotated[int, Resolve(amount)]) -> Confirm:
    log.append("confirm_payment")
    return Confirm(f"Pay {total} EUR?")


async def charge_card(total: Annotated[int, Resolve(amount)]) -> str:
    log.append("charge_card")
    return "tx-1"


async def receipt(tx: Annotated[str, Resolve(charge_card)]) -> str:
    log.append("receipt")
    return f"receipt for {tx}"


async def pay(
    ok: Annotated[bool, Resolve(confirm_payment)],
    tx: Annotated[str, Resolve(charge_card)],
    sent: Annotated[str, Resolve(receipt)],
) -> str:
    log.append("pay")
    return sent


def answered(needs: Any, payload: str) -> dict[str, Answer]:
    assert isinstance(needs, NeedsInput)
    return {a.key: Answer(a.digest, payload) for a in needs.questions}


def test_the_run_order_is_the_authors_order_with_providers_first() -> None:
    plan = compile_plan(pay, adapt=refuse_no)
    assert [(s.name, s.may_ask) for s in plan.steps] == [
        ("amount", False),
        ("confirm_payment", True),
        ("charge_card", False),
        ("receipt", False),
    ]


async def test_a_round_that_ends_with_questions_stops_at_the_first_step_that_cannot_ask() -> None:
    plan = compile_plan(pay, adapt=refuse_no)
    log.clear()
    first = await plan.run({})
    assert isinstance(first, NeedsInput)
    assert log == ["amount", "confirm_payment"]
    log.clear()
    assert await plan.run({}, answers=answered(first, "yes")) == "receipt for tx-1"
    assert log == ["amount", "confirm_payment", "charge_card", "receipt", "pay"]


async def test_a_refused_answer_ends_the_round_before_the_steps_after_the_question_run() -> None:
    plan = compile_plan(pay, adapt=refuse_no)
    first = await plan.run({})
    log.clear()
    with pytest.raises(Refused):
        await plan.run({}, answers=answered(first, "no"))
    assert "charge_card" not in log

    async def say_no(asked: Asked) -> Any:
        return "no"

    log.clear()
    with pytest.raises(Refused):
        await plan.run({}, ask=say_no)
    assert log == ["amount", "confirm_payment"]


class OutOfStock(Exception):
    pass


async def check_stock(title: str) -> int:
    log.append("check_stock")
    if title == "Emma":
        raise OutOfStock(title)
    return 3


async def confirm_order(title: str) -> Confirm:
    log.append("confirm_order")
    return Confirm(f"Order {title}?")


async def place_order(title: str) -> str:
    log.append("place_order")
    return f"order for {title}"


async def order(
    title: str,
    stock: Annotated[int, Resolve(check_stock)],
    ok: Annotated[bool, Resolve(confirm_order)],
    placed: Annotated[str, Resolve(place_order)],
) -> str:
    return placed


async def test_a_check_before_a_question_refuses_the_call_before_the_question_is_put() -> None:
    plan = compile_plan(order, adapt=refuse_no)
    asked: list[str] = []

    async def ask(question: Asked) -> Any:
        asked.append(question.step.name)
        return "yes"

    log.clear()
    with pytest.raises(ResolverError, match="check_stock") as refused:
        await plan.run({"title": "Emma"}, ask=ask)
    assert isinstance(refused.value.__cause__, OutOfStock)
    assert (asked, log) == ([], ["check_stock"])
    with pytest.raises(ResolverError, match="check_stock"):
        await plan.run({"title": "Emma"})  # in rounds: the first round refuses, nothing is asked
    assert log == ["check_stock", "check_stock"]

    log.clear()
    assert await plan.run({"title": "Dune"}, ask=ask) == "order for Dune"
    assert log == ["check_stock", "confirm_order", "place_order"]
    log.clear()
    first = await plan.run({"title": "Dune"})
    assert log == ["check_stock", "confirm_order"]
    assert await plan.run({"title": "Dune"}, answers=answered(first, "yes")) == "order for Dune"
    assert log == ["check_stock", "confirm_order", "check_stock", "confirm_order", "place_order"]


async def second_confirmation() -> Confirm:
    log.append("second_confirmation")
    return Confirm("Gift-wrap it?")


async def wrapped(
    title: str,
    ok: Annotated[bool, Resolve(confirm_order)],
    placed: Annotated[str, Resolve(place_order)],
    wrap: Annotated[bool, Resolve(second_confirmation)],
) -> str:
    return f"{placed}, wrapped"


async def unwrapped(
    title: str,
    ok: Annotated[bool, Resolve(confirm_order)],
    wrap: Annotated[bool, Resolve(second_confirmation)],
    placed: Annotated[str, Resolve(place_order)],
) -> str:
    return f"{placed}, wrapped"


async def test_independent_questions_are_put_in_one_round_unless_a_step_that_cannot_ask_is_between() -> None:
    together = compile_plan(unwrapped, adapt=refuse_no)
    log.clear()
    first = await together.run({"title": "Dune"})
    assert [a.step.name for a in first.questions] == ["confirm_order", "second_confirmation"]  # type: ignore[union-attr]
    assert await together.run({"title": "Dune"}, answers=answered(first, "yes")) == "order for Dune, wrapped"

    apart = compile_plan(wrapped, adapt=refuse_no)
    log.clear()
    first = await apart.run({"title": "Dune"})
    assert [a.step.name for a in first.questions] == ["confirm_order"]  # type: ignore[union-attr]
    second = await apart.run({"title": "Dune"}, answers=answered(first, "yes"))
    assert [a.step.name for a in second.questions] == ["second_confirmation"]  # type: ignore[union-attr]
    assert log == ["confirm_order", "confirm_order", "place_order", "second_confirmation"]
    answers = answered(first, "yes") | answered(second, "yes")
    assert await apart.run({"title": "Dune"}, answers=answers) == "order for Dune, wrapped"

    asked: list[str] = []

    async def ask(question: Asked) -> Any:
        asked.append(question.step.name)
        log.append(f"asked {question.step.name}")
        return "yes"

    log.clear()
    assert await apart.run({"title": "Dune"}, ask=ask) == "order for Dune, wrapped"
    assert log == [
        "confirm_order",
        "asked confirm_order",
        "place_order",
        "second_confirmation",
        "asked second_confirmation",
    ]


async def concurrent_confirmation() -> Any:
    log.append("concurrent_confirmation")
    return Confirm("Go?")


async def concurrent_effect() -> str:
    log.append("concurrent_effect")
    return "done"


async def together(
    ok: Annotated[bool, Resolve(concurrent_confirmation, concurrent=True)],
    effect: Annotated[str, Resolve(concurrent_effect, concurrent=True)],
) -> str:
    return effect


async def test_a_step_that_cannot_ask_does_not_run_together_with_a_question_before_it() -> None:
    plan = compile_plan(together, adapt=refuse_no)
    log.clear()
    first = await plan.run({})
    assert log == ["concurrent_confirmation"]
    assert await plan.run({}, answers=answered(first, "yes")) == "done"


async def first_question() -> Any:
    log.append("first_question")
    return Confirm("First?")


async def in_between() -> Any:  # may ask (unannotated), so it is not deferred
    log.append("in_between")
    return "between"


async def second_question() -> Any:
    log.append("second_question")
    return Confirm("Second?")


async def two_questions(
    a: Annotated[bool, Resolve(first_question)],
    between: Annotated[str, Resolve(in_between)],
    b: Annotated[bool, Resolve(second_question)],
) -> str:
    return "done"


async def test_a_refused_answer_stops_the_round_before_any_other_resolver_runs_or_question_is_put() -> None:
    plan = compile_plan(two_questions, adapt=refuse_no)
    asked: list[str] = []

    async def ask(question: Asked) -> Any:
        asked.append(question.step.name)
        return "no"

    log.clear()
    with pytest.raises(Refused, match="first_question"):
        await plan.run({}, ask=ask)
    assert asked == ["first_question"]
    assert log == ["first_question"]

    first = await plan.run({})
    assert [a.step.name for a in first.questions] == ["first_question", "second_question"]  # type: ignore[union-attr]
    replies = {"first_question": "no", "second_question": "yes"}
    answers = {a.key: Answer(a.digest, replies[a.step.name]) for a in first.questions}  # type: ignore[union-attr]
    log.clear()
    with pytest.raises(Refused, match="first_question"):
        await plan.run({}, answers=answers)
    assert log == ["first_question"]


async def country() -> Any:
    return Confirm("Ship abroad?")


async def customs(abroad: Annotated[bool, Resolve(country)]) -> Any:
    # Another resolver asks the very same question, but only once the first is answered.
    return Confirm("Ship abroad?") if abroad else False


async def ship(
    abroad: Annotated[bool, Resolve(country)], declared: Annotated[bool, Resolve(customs)]
) -> tuple[bool, bool]:
    return abroad, declared


async def test_a_question_answered_in_an_earlier_round_is_not_asked_again_by_another_resolver() -> None:
    plan = compile_plan(ship)
    first = await plan.run({})
    assert [a.step.name for a in first.questions] == ["country"]  # type: ignore[union-attr]
    assert await plan.run({}, answers=answered(first, "yes")) == (True, True)
    asked: list[str] = []

    async def ask(question: Asked) -> Any:
        asked.append(question.step.name)
        return "yes"

    assert await plan.run({}, ask=ask) == (True, True)
    assert asked == ["country"]
