"""Type-checked, never run: what a type checker infers for the engine's public surface."""

from __future__ import annotations

from typing import Annotated, Any, Literal, assert_never, assert_type

from mcpdi.engine import (
    Answer,
    AppScope,
    ArgumentBinding,
    Asked,
    Binding,
    CleanupError,
    ContextBinding,
    InvalidSignature,
    NeedsInput,
    Plan,
    Resolve,
    ResolvedBinding,
    ResolverError,
    RoundOutcome,
    Step,
    compile_plan,
    digest_of,
)


def check_stock(title: str) -> int:
    return len(title)


def reserve(title: str, copies: Annotated[int, Resolve(check_stock, inline=True)]) -> str:
    return f"{title}: {copies}"


plan = compile_plan(reserve, root_inline=True)
assert_type(plan, Plan)
assert_type(plan.steps, tuple[Step, ...])
assert_type(plan.steps[0].key, str)
assert_type(Resolve(check_stock).inline, bool)


async def first_round() -> None:
    outcome = await plan.run({"title": "Dune"})
    if isinstance(outcome, NeedsInput):
        asked = outcome.questions[0]
        assert_type(asked, Asked)
        assert_type(digest_of(asked.question), str)
        answers = {asked.key: Answer(asked.digest, {"confirm": True})}
        assert_type(await plan.run({"title": "Dune"}, answers=answers), Any)


def errors(error: InvalidSignature | ResolverError) -> BaseException:
    return error


def describe(binding: Binding) -> str:
    """A binding is one of three classes: a match over them is exhaustive."""
    match binding:
        case ArgumentBinding():
            return binding.argument
        case ContextBinding():
            return binding.context_type.__name__
        case ResolvedBinding():
            return binding.edge.provider.name
        case _:
            assert_never(binding)


assert_type(plan.resolved_params[0].edge.provider, Step)
assert_type(Resolve(check_stock, scope="app").scope, Literal["round", "call", "app"])


async def app_scoped() -> None:
    scope = AppScope()
    assert_type(await plan.run({"title": "Dune"}, {AppScope: scope}), Any)
    await scope.aclose()


def outcome_of(outcome: RoundOutcome) -> str:
    match outcome:
        case RoundOutcome.COMPLETED:
            return "completed"
        case RoundOutcome.SUSPENDED:
            return "suspended"


def cleanup_errors(error: CleanupError) -> tuple[Exception, ...]:
    assert_type(error.step, Step)
    return error.errors
