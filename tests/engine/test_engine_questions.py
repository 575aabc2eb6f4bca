"""Questions: a resolver asks instead of answering; answers count only for the exact question asked."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Annotated, Any

import pytest
from engine_questions import Confirm

from mcpdi.engine import (
    Adapter,
    Answer,
    Asked,
    Edge,
    NeedsInput,
    Question,
    Resolve,
    ResolverError,
    UnansweredQuestion,
    compile_plan,
    digest_of,
)

pytestmark = pytest.mark.anyio


runs: list[str] = []


async def stock(title: str) -> int:
    runs.append("stock")
    return len(title)


async def confirm(title: str, n: Annotated[int, Resolve(stock)]) -> Any:
    runs.append("confirm")
    return Confirm(f"Buy {title}? {n} left")


def wrap(title: str) -> Any:
    runs.append("wrap")
    return Confirm("Gift wrap?")


async def ship(ok: Annotated[bool, Resolve(confirm)]) -> Any:
    runs.append("ship")
    return Confirm("Ship today?") if ok else False


async def order(
    title: str,
    ok: Annotated[bool, Resolve(confirm)],
    wrapped: Annotated[bool, Resolve(wrap, inline=True)],
    shipped: Annotated[bool, Resolve(ship)],
) -> str:
    runs.append("body")
    return f"{title} ok={ok} wrapped={wrapped} shipped={shipped}"


def answer(result: Any, payloads: Mapping[str, Any]) -> dict[str, Answer]:
    assert isinstance(result, NeedsInput)
    return {a.key: Answer(a.digest, payloads[a.step.name]) for a in result.questions}


async def test_independent_questions_are_asked_together_and_dependents_wait_for_a_later_round() -> None:
    plan = compile_plan(order)
    runs.clear()
    first = await plan.run({"title": "Dune"})
    assert isinstance(first, NeedsInput)
    assert [a.step.name for a in first.questions] == ["confirm", "wrap"]
    assert runs == ["stock", "confirm", "wrap"], "ship waits for confirm; the body does not run"
    answers = answer(first, {"confirm": "yes", "wrap": "no"})
    runs.clear()
    second = await plan.run({"title": "Dune"}, answers=answers)
    assert isinstance(second, NeedsInput)
    assert [a.step.name for a in second.questions] == ["ship"]
    assert runs == ["stock", "confirm", "wrap", "ship"]
    answers |= answer(second, {"ship": "yes"})
    runs.clear()
    assert await plan.run({"title": "Dune"}, answers=answers) == "Dune ok=True wrapped=False shipped=True"
    assert runs[-1] == "body"


async def test_an_answer_counts_only_for_the_exact_question_so_a_changed_question_is_asked_again() -> None:
    plan = compile_plan(order)
    first = await plan.run({"title": "Dune"})
    answers = answer(first, {"confirm": "yes", "wrap": "yes"})
    again = await plan.run({"title": "Emma"}, answers=answers)  # "Buy Emma? 4 left" differs
    assert isinstance(again, NeedsInput)
    assert [a.step.name for a in again.questions] == ["confirm"]
    stale = {k: Answer("not-the-digest", "yes") for k in answers}
    assert isinstance(await plan.run({"title": "Dune"}, answers=stale), NeedsInput)


async def test_an_asked_question_carries_the_step_key_and_the_digest_of_its_canonical_render() -> None:
    plan = compile_plan(order)
    first = await plan.run({"title": "Dune"})
    assert isinstance(first, NeedsInput)
    asked = first.questions[0]
    assert asked.key == asked.step.key
    assert asked.digest == digest_of(Confirm("Buy Dune? 4 left"))
    assert len(asked.digest) == 22


def test_the_digest_is_base64url_of_sha256_over_sorted_compact_json() -> None:
    class Render(Question):
        def render(self) -> Mapping[str, Any]:
            return {"b": 1, "a": "é"}

    import base64
    import hashlib

    raw = hashlib.sha256('{"a":"é","b":1}'.encode()).digest()
    assert digest_of(Render()) == base64.urlsafe_b64encode(raw).decode().rstrip("=")[:22]


async def test_with_ask_questions_are_asked_inline_and_the_run_completes() -> None:
    plan = compile_plan(order)
    asked: list[Asked] = []

    async def ask(question: Asked) -> Any:
        asked.append(question)
        return "yes"

    runs.clear()
    assert await plan.run({"title": "Dune"}, ask=ask) == "Dune ok=True wrapped=True shipped=True"
    assert [a.step.name for a in asked] == ["confirm", "wrap", "ship"]
    assert runs.count("stock") == 1, "side effects never repeat when asking inline"


async def test_answers_given_up_front_are_used_and_ask_covers_the_rest() -> None:
    plan = compile_plan(order)
    first = await plan.run({"title": "Dune"})
    answers = answer(first, {"confirm": "yes", "wrap": "no"})

    async def ask(question: Asked) -> Any:
        assert question.step.name == "ship"
        return "no"

    assert (
        await plan.run({"title": "Dune"}, answers=answers, ask=ask)
        == "Dune ok=True wrapped=False shipped=False"
    )


async def test_resolve_also_returns_needs_input_while_questions_are_pending() -> None:
    plan = compile_plan(order)
    assert isinstance(await plan.resolve({"title": "Dune"}), NeedsInput)


async def test_call_raises_unanswered_question_when_a_resolver_asks() -> None:
    plan = compile_plan(order)
    with pytest.raises(UnansweredQuestion) as error:
        await plan.call({"title": "Dune"})
    assert [a.step.name for a in error.value.questions] == ["confirm", "wrap"]


class Outcome:
    def __init__(self, value: Any, answered: bool) -> None:
        self.value = value
        self.answered = answered


class Refused(Exception):
    pass


def adapt_outcomes(edge: Edge) -> Adapter | None:
    if edge.annotation is Outcome:
        return Adapter(plain=lambda v: Outcome(v, False), answered=lambda v: Outcome(v, True))
    if edge.parameter == "strict":

        def refuse(value: Any) -> Any:
            if value is False:
                raise Refused(edge.parameter)
            return value

        return Adapter(answered=refuse)
    return None


async def plain_value(title: str) -> str:
    return title


async def asks(title: str) -> Any:
    return Confirm("Sure?")


async def adapted(
    title: str,
    plain: Annotated[Outcome, Resolve(plain_value)],
    raw: Annotated[str, Resolve(plain_value)],
    answered: Annotated[Outcome, Resolve(asks)],
    strict: Annotated[bool, Resolve(asks)],
) -> list[Any]:
    return [(plain.value, plain.answered), raw, (answered.value, answered.answered), strict]


async def test_adapters_shape_plain_and_answered_values_per_consumer_edge() -> None:
    edges: list[Edge] = []

    def record(edge: Edge) -> Adapter | None:
        edges.append(edge)
        return adapt_outcomes(edge)

    plan = compile_plan(adapted, adapt=record)
    assert {(e.consumer, e.parameter) for e in edges} == {
        ("adapted", "plain"),
        ("adapted", "raw"),
        ("adapted", "answered"),
        ("adapted", "strict"),
    }
    first = await plan.run({"title": "t"})
    answers = answer(first, {"asks": "yes"})
    assert await plan.run({"title": "t"}, answers=answers) == [("t", False), "t", (True, True), True]


async def test_an_adapter_exception_propagates_unchanged() -> None:
    plan = compile_plan(adapted, adapt=adapt_outcomes)
    first = await plan.run({"title": "t"})
    with pytest.raises(Refused):
        await plan.run({"title": "t"}, answers=answer(first, {"asks": "no"}))

    def broken(edge: Edge) -> Adapter | None:
        def fail(value: Any) -> Any:
            raise Refused("plain")

        return Adapter(plain=fail) if edge.parameter == "raw" else None

    async def no_questions(title: str, raw: Annotated[str, Resolve(plain_value)]) -> str:
        return raw

    async def yes(question: Asked) -> Any:
        return "yes"

    with pytest.raises(Refused):
        await compile_plan(no_questions, adapt=broken, localns=globals()).run({"title": "t"})
    with pytest.raises(Refused):
        await compile_plan(adapted, adapt=broken).run({"title": "t"}, ask=yes)


async def test_wire_keys_are_opaque_short_and_stable_across_processes() -> None:
    plan = compile_plan(order)
    keys = [step.key for step in plan.steps]
    for key in keys:
        assert len(key) == 11
        assert key.startswith("r")
        assert "confirm" not in key
    assert len(set(keys)) == len(keys)
    code = (
        "import sys; sys.path.insert(0, 'tests/engine'); "
        "import test_engine_questions as m; from mcpdi.engine import compile_plan; "
        "print(' '.join(s.key for s in compile_plan(m.order).steps))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == keys


class Ctx:
    def __init__(self, user: str) -> None:
        self.user = user


async def first_question() -> Any:
    return Confirm("Go on?")


async def keyword_only(ok: Annotated[bool, Resolve(first_question)], *, title: str, ctx: Ctx) -> str:
    return f"{ok}:{title}:{ctx.user}"


def failing_after_question(ok: Annotated[bool, Resolve(first_question)]) -> str:
    raise LookupError("gone")


def sync_body(
    title: str,
    ctx: Ctx,
    text: Annotated[str, Resolve(keyword_only)],
    plus: Annotated[int, Resolve(stock)],
    *,
    extra: Annotated[str, Resolve(keyword_only)],
) -> str:
    return f"{text}|{plus}|{extra}|{ctx.user}"


async def always_yes(question: Asked) -> Any:
    return "yes"


async def test_the_round_after_a_question_fills_keywords_context_and_offloads_a_sync_root() -> None:
    plan = compile_plan(sync_body, context_types=(Ctx,), adapt=lambda edge: None)
    context = {Ctx: Ctx("ada")}
    first = await plan.run({"title": "Dune"}, context)
    assert isinstance(first, NeedsInput)
    answers = answer(first, {"first_question": "yes"})
    done = await plan.run({"title": "Dune"}, context, answers)
    assert done == "True:Dune:ada|4|True:Dune:ada|ada"
    assert await plan.run({"title": "Dune"}, context, ask=always_yes) == done
    assert await plan.resolve({"title": "Dune"}, context, answers) == {
        "title": "Dune",
        "ctx": context[Ctx],
        "text": "True:Dune:ada",
        "plus": 4,
        "extra": "True:Dune:ada",
    }


async def test_a_resolver_failing_after_a_question_raises_resolver_error_without_internal_context() -> None:
    async def tool(v: Annotated[str, Resolve(failing_after_question)]) -> str:
        return v

    plan = compile_plan(tool, localns=globals())
    with pytest.raises(ResolverError) as error:
        await plan.run({}, ask=always_yes)
    assert error.value.step.name == "failing_after_question"
    assert isinstance(error.value.__cause__, LookupError)


async def test_exceptions_after_a_question_do_not_chain_to_engine_internals() -> None:
    plan = compile_plan(adapted, adapt=adapt_outcomes)
    first = await plan.run({"title": "t"})
    with pytest.raises(Refused) as error:
        await plan.run({"title": "t"}, answers=answer(first, {"asks": "no"}))
    assert error.value.__context__ is None
