"""Which resolver results pay for the question check: the return annotation decides, at compile."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from mcpdi.engine import NeedsInput, Question, Resolve, compile_plan

pytestmark = pytest.mark.anyio


class Ask(Question):
    def render(self) -> Mapping[str, Any]:
        return {"ask": True}


@dataclass
class Stock:
    copies: int


def plain(title: str) -> Stock:
    return Stock(len(title))


@dataclass
class Shelf:
    title: str


def unannotated(title: str):  # type: ignore[no-untyped-def]
    return Ask()


def any_value(title: str) -> Any:
    return Ask()


def union(title: str) -> Stock | Ask:
    return Ask()


def asks_by_class(title: str) -> Ask:
    return Ask()


def checks_of(resolver: Any) -> int:
    def tool(title: str, value: Annotated[Any, Resolve(resolver, inline=True)]) -> Any:
        return value

    return compile_plan(tool, root_inline=True).source.count("isinstance(")


def test_a_resolver_annotated_with_a_plain_class_skips_the_question_check() -> None:
    assert checks_of(plain) == 0
    assert checks_of(Shelf) == 0


@pytest.mark.parametrize("resolver", [unannotated, any_value, union, asks_by_class])
def test_a_resolver_that_may_ask_keeps_the_question_check(resolver: Any) -> None:
    assert checks_of(resolver) == 1


@pytest.mark.parametrize("resolver", [unannotated, any_value, union, asks_by_class])
async def test_every_resolver_that_may_ask_gets_its_question_asked(resolver: Any) -> None:
    def tool(title: str, value: Annotated[Any, Resolve(resolver, inline=True)]) -> Any:
        return value

    plan = compile_plan(tool, root_inline=True)
    assert isinstance(await plan.run({"title": "Dune"}), NeedsInput)


def lies(title: str) -> Stock:
    return Ask()  # type: ignore[return-value]  # a type checker rejects this; the engine trusts the annotation


def asks_first(title: str) -> Any:
    return Ask()


async def test_a_resolver_annotated_with_a_plain_class_is_injected_as_is_on_both_paths() -> None:
    def tool(
        title: str,
        first: Annotated[Any, Resolve(asks_first, inline=True)],
        value: Annotated[Any, Resolve(lies, inline=True)],
    ) -> Any:
        return value

    plan = compile_plan(tool, root_inline=True)
    assert [step.name for step in plan.steps] == ["asks_first", "lies"]
    only_lies = compile_plan(checks_tool(lies), root_inline=True)
    assert isinstance(await only_lies.run({"title": "Dune"}), Ask)

    async def answer(asked: Any) -> Any:
        return "ok"

    assert isinstance(await plan.run({"title": "Dune"}, ask=answer), Ask)


def checks_tool(resolver: Any) -> Any:
    def tool(title: str, value: Annotated[Any, Resolve(resolver, inline=True)]) -> Any:
        return value

    return tool
