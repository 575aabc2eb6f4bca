"""Mistakes in a tool's signature fail at `@mcp.tool()`, with texts that say what, where and how to fix."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from typing import Annotated

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Elicit, InvalidSignature, MCPServer, Resolve, Sample
from mcpdi.types import InputRequiredResult

HERE = r"[^\s()]*test_registration_errors\.py"


def text_of(error: pytest.ExceptionInfo[InvalidSignature]) -> str:
    """The message with this file's `path:line` as `<here>` and its module as `<module>`."""
    located = re.sub(HERE + r":\d+", "<here>", str(error.value))
    return re.sub(r"[\w.]*test_registration_errors:", "<module>:", located)


class Name(BaseModel):
    name: str


class Nested(BaseModel):
    inner: Name


def needs_user(user_id: str) -> str:
    return user_id


def cycle_a(b: Annotated[str, Resolve(cycle_b)]) -> str:  # pyright: ignore[reportUndefinedVariable, reportUnknownArgumentType]
    return b


def cycle_b(a: Annotated[str, Resolve(cycle_a)]) -> str:
    return a


def ask_nested() -> Elicit[Nested]:
    raise AssertionError


def ask_two() -> Elicit[Name] | Sample:
    raise AssertionError


def ask_name() -> Elicit[Name]:
    return Elicit("Name?", Name)


def test_a_resolver_parameter_that_cannot_be_filled_is_named() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def whoami(user: Annotated[str, Resolve(needs_user)]) -> str:
            return user

    assert caught.value.parameter == "user_id"
    assert text_of(caught) == snapshot(
        "Resolver 'needs_user' (<here>) parameter 'user_id' cannot be filled: it is not a call argument (arguments: none), not annotated with a context type (Context) and not Annotated[_, Resolve(...)]. Rename it to a call argument, annotate it with a context type, or annotate it as Annotated[T, Resolve(fn)]."
    )


def test_a_cycle_of_resolvers_is_drawn_in_full() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def loop(x: Annotated[str, Resolve(cycle_a)]) -> str:
            return x

    assert text_of(caught) == snapshot("""\
Resolver 'cycle_a' has a cyclic dependency. Resolvers of 'loop' depend on each other in a cycle: cycle_a -> cycle_b -> cycle_a
   cycle_a  <module>:cycle_a  (<here>)
-> cycle_b  <module>:cycle_b  (<here>)
-> cycle_a  <module>:cycle_a  (<here>)
A resolver cannot depend on itself, directly or through other resolvers; remove one of these dependencies.\
""")


def test_an_argument_starting_with_an_underscore_is_refused() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def under(_x: int) -> str:
            return ""

    assert text_of(caught) == snapshot(
        "Parameter '_x' of 'under' (<here>) starts with '_', which a JSON argument name cannot map to; rename it"
    )


def test_an_elicit_annotation_of_a_nested_model_is_refused() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def where(at: Annotated[Nested, Resolve(ask_nested)]) -> str:
            return ""

    assert text_of(caught) == snapshot(
        "Resolver 'ask_nested' (<here>) asks Elicit[Nested], but Nested.inner cannot be asked in a form: it renders as {'$ref': '#/$defs/Name'}; a form field must be a string, number, integer, boolean or enum (use one of those, or ask for it in a separate question)"
    )


def test_a_resolver_annotated_with_two_questions_is_refused() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def two(at: Annotated[Name, Resolve(ask_two)]) -> str:
            return ""

    assert text_of(caught) == snapshot(
        "Resolver 'ask_two' (<here>) return annotation has several Elicit/Sample/ListRoots arms; a resolver asks one question - split it into separate resolvers"
    )


def test_resolvers_and_an_input_required_return_are_refused_together() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def t9(who: Annotated[Name, Resolve(ask_name)]) -> str | InputRequiredResult:
            return ""

    assert text_of(caught) == snapshot(
        "Tool 't9' combines Resolve(...) parameters with an InputRequiredResult return; a call has one input_required channel, so the multi-round flow is driven either by resolvers or by the tool body, not both"
    )


def test_structured_output_needs_a_json_able_return_type() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool(structured_output=True)
        def nothing():  # pyright: ignore[reportUnknownParameterType]
            return None

    assert text_of(caught) == snapshot(
        "Tool 'nothing' (<here>): structured_output=True needs a JSON-able return type"
    )


def test_a_resource_template_must_take_exactly_its_uri_parameters() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.resource("books://{title}")
        def stock(name: str) -> str:
            return name

    assert text_of(caught) == snapshot(
        "Resource 'books://{title}' (<here>): the URI's parameters ['title'] must be the function's arguments ['name']; resolved and Context parameters are not in the URI"
    )


def test_a_lambda_needs_a_name() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(ValueError, match=r"pass @mcp.tool\(name=...\)"):
        mcp.add_tool(lambda: "x")
