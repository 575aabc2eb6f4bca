"""Consent before side effects: steps that cannot ask wait for a round without pending questions,
and a refused answer ends the round before anything else runs or is asked."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from engine_questions import Confirm

from mcpdi.engine import Adapter, Answer, Asked, Edge, NeedsInput, Resolve, compile_plan

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
    tx: Annotated[str, Resolve(charge_card)],
    sent: Annotated[str, Resolve(receipt)],
    ok: Annotated[bool, Resolve(confirm_payment)],
) -> str:
    log.append("pay")
    return sent


def answered(needs: Any, payload: str) -> dict[str, Answer]:
    assert isinstance(needs, NeedsInput)
    return {a.key: Answer(a.digest, payload) for a in needs.questions}


def test_steps_that_cannot_ask_and_feed_no_asking_step_come_after_every_step_that_may_ask() -> None:
    plan = compile_plan(pay, adapt=refuse_no)
    assert [(s.name, s.may_ask, s.deferred) for s in plan.steps] == [
        ("amount", False, False),  # confirm_payment needs it
        ("confirm_payment", True, False),
        ("charge_card", False, True),
        ("receipt", False, True),
    ]


async def test_a_round_that_ends_with_questions_does_not_run_the_deferred_steps() -> None:
    plan = compile_plan(pay, adapt=refuse_no)
    log.clear()
    first = await plan.run({})
    assert isinstance(first, NeedsInput)
    assert log == ["amount", "confirm_payment"]
    log.clear()
    assert await plan.run({}, answers=answered(first, "yes")) == "receipt for tx-1"
    assert log == ["amount", "confirm_payment", "charge_card", "receipt", "pay"]


async def test_a_refused_answer_ends_the_round_before_the_deferred_steps_run() -> None:
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
