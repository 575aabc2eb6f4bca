"""The written-out paths of a plain `tools/call` answer exactly as the pydantic paths do.

Plain arguments (`read_plain_arguments`) and plain results (`Output.to_wire`, which the
runner uses while no middleware is installed and tracing is off) are held equal to the
models they stand for, on valid and invalid input, down to the bytes of the answer.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from core_doubles import RecordingPeer, handshake, modern_request, request
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples

from mcpdi import MCPServer
from mcpdi._arguments import dump_arguments, plan_arguments, pre_parse_json, read_plain_arguments
from mcpdi._output._convert import plan_output
from mcpdi.engine import Argument
from mcpdi.lowlevel import Connection
from mcpdi.lowlevel._runner import _dump  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.anyio

PLAIN_TYPES: tuple[type, ...] = (str, int, float, bool)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["5", "1.5", "true", "[1]", '{"a": 1}', "null", ""])
)
# Values a client may send for an argument: mostly scalars of every JSON kind, some containers.
JSON_VALUES = st.one_of(
    SCALARS, SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.text(max_size=3), SCALARS, max_size=2)
)
NAMES = ("title", "count", "ratio", "flag", "x")


def _default_for(kind: type) -> st.SearchStrategy[Any]:
    strategies: dict[type, st.SearchStrategy[Any]] = {
        str: st.text(max_size=3),
        int: st.integers(),
        float: st.floats(allow_nan=False, allow_infinity=False),
        bool: st.booleans(),
    }
    return strategies[kind]


EMPTY: Any = inspect.Parameter.empty


def _argument(name: str, annotation: Any, default: Any = EMPTY) -> Argument:
    return Argument(name, annotation, default, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@st.composite
def plain_calls(draw: st.DrawFn) -> tuple[tuple[Argument, ...], dict[str, Any]]:
    """An all-scalar signature, and arguments for it: absent, of its type, of another, or extra."""
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4))
    arguments: list[Argument] = []
    raw: dict[str, Any] = {}
    for name in names:
        kind = draw(st.sampled_from(PLAIN_TYPES))
        required = draw(st.booleans())
        arguments.append(_argument(name, kind, EMPTY if required else draw(_default_for(kind))))
        choice = draw(st.sampled_from(["absent", "typed", "other"]))
        if choice == "typed":
            raw[name] = draw(_default_for(kind) if kind is not float else st.floats())
        elif choice == "other":
            raw[name] = draw(JSON_VALUES)
    raw.update(draw(st.dictionaries(st.sampled_from(["y", "z", *NAMES]), JSON_VALUES, max_size=2)))
    return tuple(arguments), raw


def _typed(values: dict[str, Any]) -> list[tuple[str, type, Any]]:
    """Values with their types, so that `1`, `1.0` and `True` do not compare equal; nan equal to itself."""
    return [
        (name, type(value), "nan" if isinstance(value, float) and math.isnan(value) else value)
        for name, value in values.items()
    ]


@settings(max_examples=examples(500), deadline=None)
@given(plain_calls())
def test_plain_arguments_are_read_as_the_model_validates_them(
    call: tuple[tuple[Argument, ...], dict[str, Any]],
) -> None:
    signature, raw = call
    plan = plan_arguments("tArguments", signature, owner="t", location="here")
    assert plan.plain is not None
    model = plan.model()
    try:
        expected: dict[str, Any] | None = dump_arguments(
            model.__pydantic_validator__.validate_python(pre_parse_json(model, raw))
        )
    except ValueError:
        expected = None
    read = read_plain_arguments(plan.plain, raw)
    if read is not None:  # what it reads, the model reads alike; what it leaves, the model decides
        assert expected is not None
        assert _typed(read) == _typed(expected)


def test_arguments_that_are_not_all_plain_scalars_have_no_plain_reading() -> None:
    listed = (_argument("tags", list[str]),)
    assert plan_arguments("tArguments", listed, owner="t", location="here").plain is None
    optional = (_argument("title", str | None, None),)
    assert plan_arguments("tArguments", optional, owner="t", location="here").plain is None


RETURNS: list[Any] = [str, int, bool, float, Any, str | None, list[str], dict[str, int]]
VALUES: list[Any] = ["Dune", "", 'ü\n"q"', 5, 0, True, False, 1.5, None, ["a", "b"], {"a": 1}, (1, 2)]


class Text(str):
    """A `str` subclass: not plain, the model path renders it."""


@pytest.mark.parametrize("returns", RETURNS)
@pytest.mark.parametrize("value", [*VALUES, Text("sub")])
def test_a_result_in_wire_form_is_the_dumped_result(returns: Any, value: Any) -> None:
    output = plan_output("fn", returns, location="here")
    try:
        expected = json.dumps(_dump(output.to_result(value)))
    except ValueError:
        expected = None
    try:
        written = output.to_wire(value)
        wire = json.dumps(written if isinstance(written, dict) else _dump(written))
    except ValueError:
        wire = None
    assert wire == expected


async def echo_title(title: str) -> str:
    return title


async def count_up(count: int, step: int = 1) -> int:
    return count + step


async def check_flag(flag: bool, ratio: float = 0.5) -> bool:
    return flag and ratio > 0


async def render(title: str, ratio: float = 1.0) -> Any:
    return title if ratio > 0 else {"ratio": ratio}


async def nothing() -> None:
    return None


def bookshop(*, general: bool) -> MCPServer:
    """The same tools; `general` takes the pydantic paths (a pass-through middleware, no plain readings)."""
    mcp = MCPServer("bookshop")
    for fn in (echo_title, count_up, check_flag, render, nothing):
        mcp.add_tool(fn)
    if general:

        async def pass_through(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
            return await call_next(ctx)

        mcp.add_middleware(pass_through)
        tools = mcp._registry.tools  # pyright: ignore[reportPrivateUsage]
        for name, tool in tools.items():
            tools[name] = dataclasses.replace(tool, arguments=dataclasses.replace(tool.arguments, plain=None))
    return mcp


CALLS: list[tuple[str, Any]] = [
    ("echo_title", {"title": "Dune"}),
    ("echo_title", {"title": "Dune", "extra": [1]}),
    ("echo_title", {}),
    ("echo_title", None),
    ("echo_title", {"title": 5}),
    ("echo_title", {"title": None}),
    ("count_up", {"count": 2}),
    ("count_up", {"count": 2, "step": 3}),
    ("count_up", {"count": "2"}),
    ("count_up", {"count": True}),
    ("count_up", {"count": 2.0}),
    ("count_up", {"count": 2.5}),
    ("check_flag", {"flag": True}),
    ("check_flag", {"flag": "true", "ratio": 1}),
    ("check_flag", {"flag": 1, "ratio": "x"}),
    ("render", {"title": "Dune"}),
    ("render", {"title": "Dune", "ratio": -1.0}),
    ("render", {"title": "Dune", "ratio": -1}),
    ("nothing", {}),
    ("nothing", {"a": 1}),
    ("missing", {}),
]


async def answers(mcp: MCPServer, era: str) -> list[str]:
    out: list[str] = []
    async with mcp.running() as runner:
        peer = RecordingPeer()
        connection = Connection.for_modern_request() if era == "modern" else Connection()
        if era == "legacy":
            await handshake(runner, connection, peer)
        for number, (name, arguments) in enumerate(CALLS, 1):
            params: dict[str, Any] = {"name": name}
            if arguments is not None:
                params["arguments"] = arguments
            if era == "modern":
                message = modern_request(number, "tools/call", params)
            else:
                message = request(number, "tools/call", params)
            out.append(json.dumps(await runner.handle(message, connection, peer)))
    return out


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_plain_calls_answer_the_same_bytes_as_the_general_path(era: str) -> None:
    quick = await answers(bookshop(general=False), era)
    general = await answers(bookshop(general=True), era)
    assert quick == general
    assert any('"isError": true' in answer for answer in quick)  # the invalid calls were refused
    assert any('"structuredContent": {"result": 3}' in answer for answer in quick)
