"""Type-checked, never run: what a type checker infers for the engine's public surface."""

from __future__ import annotations

from typing import Annotated, Any, assert_type

from mcpdi.engine import (
    Answer,
    Asked,
    InvalidSignature,
    NeedsInput,
    Plan,
    Resolve,
    ResolverError,
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
