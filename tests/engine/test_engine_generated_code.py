"""The generated code is debuggable: its own file name, its source in linecache, the plan's name."""
# ruff: noqa: E501

from __future__ import annotations

import inspect
import linecache
import re
import traceback
from types import CodeType
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot

from mcpdi.engine import InvalidSignature, Plan, Resolve, ResolverError, compile_plan

pytestmark = pytest.mark.anyio


async def stock(title: str) -> int:
    return len(title)


async def order_book(title: str, copies: Annotated[int, Resolve(stock)]) -> str:
    msg = f"no {title}"
    raise LookupError(msg)


def code_of(plan: Plan) -> CodeType:
    assert plan.source  # the code is generated on first use: a run, or reading the source
    run: Any = plan.run  # the generated function behind the RunFunction protocol
    return run.__code__


def generated_frames(error: BaseException) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<mcpdi plan")]


async def test_a_traceback_shows_the_generated_line_under_the_plans_own_file_and_name() -> None:
    plan = compile_plan(order_book)
    with pytest.raises(LookupError) as error:
        await plan.run({"title": "Dune"})
    (frame,) = generated_frames(error.value)
    # Another plan of the same name compiled earlier in the process takes the next number.
    assert re.fullmatch(r"<mcpdi plan order_book( #\d+)?>", frame.filename)
    assert frame.name == "order_book"
    assert frame.line == "return await _f1(a0, v0)"
    assert frame.line in plan.source
    assert "".join(linecache.getlines(frame.filename)) == plan.source


async def test_a_failing_resolver_is_reported_from_the_generated_frame_of_its_plan() -> None:
    async def broken(title: str) -> int:
        raise ValueError(title)

    async def sell(title: str, copies: Annotated[int, Resolve(broken)]) -> int:
        return copies

    with pytest.raises(ResolverError) as error:
        await compile_plan(sell, name="sell_book", localns=locals()).run({"title": "Dune"})
    (frame,) = generated_frames(error.value)
    assert (frame.filename, frame.name) == ("<mcpdi plan sell_book>", "sell_book")
    assert frame.line == "raise _resolver_error(_STEPS, [v0], error) from error"
    assert type(error.value).__module__ == "mcpdi.engine"


def test_the_run_function_and_its_code_carry_the_plans_name() -> None:
    plan = compile_plan(order_book, name="books.order")
    code = code_of(plan)
    assert (code.co_name, code.co_qualname) == ("books.order", "books.order")
    assert code.co_filename == "<mcpdi plan books.order>"
    assert inspect.getsource(plan.run) == plan.source  # pdb's `list` reads the same lines


async def test_the_code_is_generated_on_the_first_run_and_a_run_kept_before_runs_it_too() -> None:
    plan = compile_plan(order_book, name="books.deferred")
    kept: Any = plan.run
    assert "<mcpdi plan books.deferred>" not in linecache.cache
    with pytest.raises(LookupError):
        await kept({"title": "Dune"})
    assert kept is plan.run
    assert kept.__code__.co_filename == "<mcpdi plan books.deferred>"
    assert "".join(linecache.getlines("<mcpdi plan books.deferred>")) == plan.source
    with pytest.raises(LookupError) as error:
        await kept({"title": "Dune"})
    assert [frame.name for frame in generated_frames(error.value)] == ["books.deferred"]


def test_two_plans_of_one_name_with_different_code_get_different_file_names() -> None:
    async def twin(title: str) -> str:
        return title

    async def other_twin(title: str, copies: Annotated[int, Resolve(stock)]) -> str:
        return title

    first = compile_plan(twin, name="twin")
    again = compile_plan(twin, name="twin")
    second = compile_plan(other_twin, name="twin")
    names = [code_of(p).co_filename for p in (first, again, second)]
    assert names == ["<mcpdi plan twin>", "<mcpdi plan twin>", "<mcpdi plan twin #2>"]
    assert "".join(linecache.getlines(names[2])) == second.source


@pytest.mark.parametrize("name", ["x=1;import os;y", "class", "a b"])
def test_a_parameter_name_that_is_not_an_identifier_is_refused_before_it_reaches_the_source(
    name: str,
) -> None:
    def tool(**kwargs: Any) -> str:
        return "x"

    parameter = inspect.Parameter("placeholder", inspect.Parameter.KEYWORD_ONLY, annotation=str)
    parameter._name = name  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]  # a forged signature
    tool.__signature__ = inspect.Signature([parameter])  # type: ignore[attr-defined]
    with pytest.raises(InvalidSignature) as error:
        compile_plan(tool)
    assert error.value.parameter == name
    text = re.sub(r"\.py:\d+", ".py:N", str(error.value)).replace(name, "NAME")
    assert text == snapshot(
        "Function 'tool' (tests/engine/test_engine_generated_code.py:N) has a parameter named 'NAME', which is not a Python identifier; a signature from `def` always has identifiers. Fix the `__signature__` set on it, or wrap it in a function with named parameters."
    )
