"""The typed boundary: a resolver's return type against its consumer's, checked at registration."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, NewType, Protocol, TypedDict, TypeVar

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

import mcpdi
from mcpdi import (
    Elicit,
    ElicitationResult,
    InvalidSignature,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
    ToolError,
)
from mcpdi._boundary import fit, fit_any, given_by_resolver
from mcpdi.engine import compile_plan
from mcpdi.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

HERE = r"[^\s()]*test_typed_boundary\.py:\d+"


class Name(BaseModel):
    name: str


class FullName(Name):
    family: str = ""


class Colour(BaseModel):
    colour: str


class Database:
    pass


def count() -> int:
    return 1


def nothing() -> None:
    return None


def a_name() -> Name:
    return Name(name="Ada")


def a_full_name() -> FullName:
    return FullName(name="Ada")


def anything() -> Any:
    return 5


def unannotated():  # pyright: ignore[reportUnknownParameterType]
    return "x"


def ask_name() -> Elicit[Name]:
    return Elicit("Name?", Name)


def known_or_ask() -> Name | Elicit[Name]:
    return Elicit("Name?", Name)


def ask_llm() -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text="hi"))], max_tokens=5)


def ask_roots() -> ListRoots:
    return ListRoots()


def maybe_name() -> Name | None:
    return None


def text_of(error: pytest.ExceptionInfo[InvalidSignature]) -> str:
    located = re.sub(HERE, "<here>", str(error.value))
    return located


def register(annotation: Any) -> None:
    mcp = MCPServer("Boundary")

    def tool(value: Any) -> str:
        return str(value)

    tool.__annotations__ = {"value": annotation, "return": str}
    mcp.add_tool(tool)


@pytest.mark.parametrize(
    "annotation",
    [
        pytest.param(Annotated[Name, Resolve(ask_name)], id="Elicit[T] feeds T"),
        pytest.param(
            Annotated[ElicitationResult[Name], Resolve(ask_name)], id="Elicit[T] feeds ElicitationResult[T]"
        ),
        pytest.param(Annotated[Name, Resolve(known_or_ask)], id="T | Elicit[T] feeds T"),
        pytest.param(Annotated[CreateMessageResult, Resolve(ask_llm)], id="Sample feeds its result"),
        pytest.param(Annotated[ListRootsResult, Resolve(ask_roots)], id="ListRoots feeds ListRootsResult"),
        pytest.param(Annotated[Name, Resolve(a_full_name)], id="a subclass"),
        pytest.param(Annotated[FullName, Resolve(a_name)], id="a base class may be the subclass"),
        pytest.param(Annotated[float, Resolve(count)], id="int feeds float"),
        pytest.param(Annotated[str, Resolve(anything)], id="Any gives anything"),
        pytest.param(Annotated[Any, Resolve(count)], id="Any takes anything"),
        pytest.param(Annotated[str, Resolve(unannotated)], id="unannotated"),
        pytest.param(Annotated[Name | None, Resolve(maybe_name)], id="optional"),
        pytest.param(Annotated[Name, Resolve(maybe_name)], id="optional may be present"),
        pytest.param(Annotated[Database, Resolve(Database)], id="a class resolver"),
    ],
)
def test_a_resolver_whose_result_can_fit_is_registered(annotation: Any) -> None:
    register(annotation)


@pytest.mark.parametrize(
    ("annotation", "text"),
    [
        (
            Annotated[str, Resolve(count)],
            snapshot(
                "Resolver 'count' (<here>) returns int, but parameter 'value' of 'tool' (<here>) takes str; make the resolver return str, or annotate the parameter with what the resolver returns"
            ),
        ),
        (
            Annotated[str, Resolve(nothing)],
            snapshot(
                "Resolver 'nothing' (<here>) returns None, but parameter 'value' of 'tool' (<here>) takes str; make the resolver return str, or annotate the parameter with what the resolver returns"
            ),
        ),
        (
            Annotated[Colour, Resolve(ask_name)],
            snapshot(
                "Resolver 'ask_name' (<here>) returns Elicit[Name], but parameter 'value' of 'tool' (<here>) takes Colour; make the resolver return Colour, or annotate the parameter with what the resolver returns"
            ),
        ),
        (
            Annotated[ElicitationResult[Colour], Resolve(ask_name)],
            snapshot(
                "Resolver 'ask_name' (<here>) returns Elicit[Name], but parameter 'value' of 'tool' (<here>) takes ElicitationResult[Colour]; make the resolver return Colour, or annotate the parameter with what the resolver returns"
            ),
        ),
        (
            Annotated[str, Resolve(ask_llm)],
            snapshot(
                "Resolver 'ask_llm' (<here>) returns Sample, but parameter 'value' of 'tool' (<here>) takes str; make the resolver return str, or annotate the parameter with what the resolver returns"
            ),
        ),
        (
            Annotated[int, Resolve(ask_roots)],
            snapshot(
                "Resolver 'ask_roots' (<here>) returns ListRoots, but parameter 'value' of 'tool' (<here>) takes int; make the resolver return int, or annotate the parameter with what the resolver returns"
            ),
        ),
    ],
)
def test_a_resolver_whose_result_cannot_fit_is_refused(annotation: Any, text: str) -> None:
    with pytest.raises(InvalidSignature) as caught:
        register(annotation)
    assert caught.value.parameter == "value"
    assert text_of(caught) == text


def greeting(name: Annotated[str, Resolve(count)]) -> str:
    return name


def test_a_mismatch_between_two_resolvers_names_the_consuming_resolver() -> None:
    mcp = MCPServer("Boundary")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def greet(text: Annotated[str, Resolve(greeting)]) -> str:
            return text

    assert caught.value.function is count
    assert text_of(caught) == snapshot(
        "Resolver 'count' (<here>) returns int, but parameter 'name' of 'greeting' (<here>) takes str; make the resolver return str, or annotate the parameter with what the resolver returns"
    )


def load_user(user_id: int) -> Name:
    return Name(name=f"user {user_id}")


def test_a_resolver_taking_an_argument_as_another_type_is_refused() -> None:
    mcp = MCPServer("Boundary")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def whoami(user_id: str, user: Annotated[Name, Resolve(load_user)]) -> str:
            return user.name

    assert caught.value.parameter == "user_id"
    assert text_of(caught) == snapshot(
        "Resolver 'load_user' (<here>) takes argument 'user_id' as int, but 'whoami' (<here>) declares it as str; give both the same type (the resolver receives the value the call argument was validated to)"
    )


def test_the_plan_carries_the_hints_it_read() -> None:
    def tool(value: Annotated[Name, Resolve(known_or_ask)]) -> str:
        return value.name

    plan = compile_plan(tool, localns=locals())
    assert plan.hints["return"] is str
    assert plan.steps[0].returns == Name | Elicit[Name]
    assert plan.steps[0].hints == {"return": Name | Elicit[Name]}


def load_greeting(name: str) -> str:
    return f"Hello {name}"


def narrower_argument_server() -> MCPServer:
    mcp = MCPServer("Boundary")

    @mcp.tool()
    def greet(greeting: Annotated[str, Resolve(load_greeting)], name: str | None = None) -> str:
        return greeting

    return mcp


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_an_argument_a_resolver_takes_narrower_is_validated_per_call(protocol_version: str) -> None:
    mcp = narrower_argument_server()
    fine = await mcp.call_tool("greet", {"name": "Ada"}, protocol_version=protocol_version)
    assert fine.content == [TextContent(type="text", text="Hello Ada")]
    with pytest.raises(ToolError) as refused:
        await mcp.call_tool("greet", {}, protocol_version=protocol_version)
    assert str(refused.value) == snapshot(
        "Error executing tool greet: argument 'name' must be str here (resolver 'load_greeting' takes it), got None: Input should be a valid string"
    )


@pytest.mark.anyio
async def test_reading_the_source_of_a_plan_that_checks_its_arguments_keeps_the_check() -> None:
    mcp = narrower_argument_server()
    plan = mcp._registry.tools["greet"].plan  # pyright: ignore[reportPrivateUsage]
    assert "_offload_hop" in plan.source  # generated now, before any call (a sync resolver: one hop)
    fine = await mcp.call_tool("greet", {"name": "Ada"})
    assert fine.content == [TextContent(type="text", text="Hello Ada")]
    with pytest.raises(ToolError, match="argument 'name' must be str here"):
        await mcp.call_tool("greet", {})


def any_text() -> Any:
    return 5


def checked_server(*, per_resolver: bool) -> MCPServer:
    mcp = MCPServer("Boundary", validate_resolvers=not per_resolver)

    @mcp.tool()
    def shout(text: Annotated[str, Resolve(any_text, validate=per_resolver)]) -> str:
        return repr(text)

    @mcp.tool()
    def outcome(text: Annotated[ElicitationResult[str], Resolve(any_text, validate=per_resolver)]) -> str:
        return repr(text)

    return mcp


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(
    "per_resolver", [True, False], ids=["Resolve(validate=True)", "validate_resolvers=True"]
)
@pytest.mark.parametrize("tool", ["shout", "outcome"])
async def test_a_validated_resolver_result_that_does_not_fit_fails_the_call_and_is_logged(
    protocol_version: str, per_resolver: bool, tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    mcp = checked_server(per_resolver=per_resolver)
    with caplog.at_level(logging.ERROR, logger="mcpdi"), pytest.raises(ToolError) as failed:
        await mcp.call_tool(tool, protocol_version=protocol_version)
    assert str(failed.value) == f"Error executing tool {tool}"
    (record,) = caplog.records
    assert record.exc_info is not None
    assert re.sub(HERE, "<here>", str(record.exc_info[1])) == (
        f"Resolver 'any_text' (<here>) feeding parameter 'text' of {tool!r} returned int, "
        "but the parameter takes str: Input should be a valid string"
    )


@pytest.mark.anyio
async def test_an_unvalidated_resolver_result_is_handed_over_as_it_is() -> None:
    mcp = MCPServer("Boundary")

    @mcp.tool()
    def shout(text: Annotated[str, Resolve(any_text)]) -> str:
        return repr(text)

    result = await mcp.call_tool("shout")
    assert result.content == [TextContent(type="text", text="5")]


class Shape(Protocol):
    def area(self) -> float: ...


class Hue(StrEnum):
    RED = "red"


class Point(TypedDict):
    x: int


UserId = NewType("UserId", int)
T = TypeVar("T")


@pytest.mark.parametrize(
    ("given", "wanted", "verdict"),
    [
        (int, str, "mismatch"),
        (None, str, "mismatch"),
        (dict, Name, "mismatch"),
        (tuple[int, ...], list[int], "mismatch"),
        (float, int, "mismatch"),
        (int, Literal["a"], "mismatch"),
        (Literal["a", "b"], Literal["c"], "mismatch"),
        (int, float, "fits"),
        (bool, int, "fits"),
        (FullName, Name, "fits"),
        (str, str | None, "fits"),
        (list[str], Sequence[str], "fits"),
        (list[str], list[str], "fits"),
        (Literal["a"], str, "fits"),
        (Literal["a"], Literal["a", "b"], "fits"),
        (Annotated[int, "extra"], int, "fits"),
        (int, Any, "fits"),
        (int, object, "fits"),
        (Name, FullName, "may_fit"),
        (str | None, str, "may_fit"),
        (Any, int, "may_fit"),
        (object, int, "may_fit"),
        (T, int, "may_fit"),
        (str, Literal["a"], "may_fit"),
        (str, Hue, "may_fit"),
        (dict, Point, "may_fit"),
        (Name, Shape, "may_fit"),
        (int, UserId, "may_fit"),
        (Iterator[int], list[int], "may_fit"),
        (list[int], list[str], "may_fit"),
    ],
)
def test_the_boundary_refuses_only_what_the_annotations_settle(given: Any, wanted: Any, verdict: str) -> None:
    assert fit(given, wanted) == verdict


def test_the_engine_hands_the_validate_flag_to_the_host_on_the_edge() -> None:
    seen: list[tuple[str, bool]] = []

    def adapt(edge: Any) -> None:
        seen.append((edge.parameter, edge.validate))

    def tool(
        checked: Annotated[int, Resolve(count, validate=True)], trusted: Annotated[int, Resolve(count)]
    ) -> int:
        return checked + trusted

    compile_plan(tool, adapt=adapt)
    assert seen == [("checked", True), ("trusted", False)]


def a_shape() -> Shape:
    raise AssertionError


def test_validating_a_type_pydantic_cannot_check_is_refused_at_registration() -> None:
    mcp = MCPServer("Boundary")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def area(shape: Annotated[Shape, Resolve(a_shape, validate=True)]) -> float:
            return shape.area()

    assert caught.value.parameter == "shape"
    assert text_of(caught) == snapshot(
        "Resolver 'a_shape' (<here>) feeding parameter 'shape' of 'area' is to be validated, but pydantic cannot check Shape; annotate the parameter with a type pydantic can validate, or drop validate=True"
    )


SCALARS = (str, int, float, bool, bytes)


@pytest.mark.parametrize("returns", SCALARS)
@pytest.mark.parametrize("takes", SCALARS)
def test_a_scalar_edge_is_refused_exactly_when_the_boundary_analysis_refuses_it(
    returns: type, takes: type
) -> None:
    def provide() -> Any:
        return returns()

    provide.__annotations__ = {"return": returns}

    async def tool(value: Annotated[Any, Resolve(provide)]) -> str:
        return str(value)

    tool.__annotations__ = {"value": Annotated[takes, Resolve(provide)], "return": str}
    mcp = MCPServer("shop")
    if fit_any(given_by_resolver(returns), takes) == "mismatch":
        with pytest.raises(InvalidSignature, match="make the resolver return"):
            mcp.add_tool(tool)
    else:
        mcp.add_tool(tool)
        assert mcp.registered_tool("tool").plan.steps[0].returns is returns


class Card(BaseModel):
    number: str


def card_as_dict() -> Any:
    return {"number": "4242"}


def shared_card() -> Card:
    return SHARED_CARD


SHARED_CARD = Card(number="1111")


@pytest.mark.anyio
async def test_a_validated_dict_for_a_model_parameter_reaches_the_body_as_the_model() -> None:
    mcp = MCPServer("Cards")

    @mcp.tool()
    def pay(
        card: Annotated[Card, Resolve(card_as_dict, validate=True)],
        same: Annotated[Card, Resolve(shared_card, validate=True)],
    ) -> str:
        return f"{type(card).__name__} {card.number}; the resolver's own object: {same is SHARED_CARD}"

    result = await mcp.call_tool("pay")
    assert result.structured_content == {"result": "Card 4242; the resolver's own object: True"}


def test_a_ctx_parameter_without_its_context_annotation_is_warned_of_at_registration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mcp = MCPServer("Warned")
    with caplog.at_level(logging.WARNING, logger="mcpdi"):

        @mcp.tool()
        def lookup(title: str, ctx) -> str:  # pyright: ignore[reportMissingParameterType]
            return title

    (record,) = caplog.records
    assert re.sub(r"\(.*:\d+\)", "(<here>)", record.getMessage()) == (
        "lookup (<here>): parameter 'ctx' is not annotated as Context, so it is a call argument the "
        "client must send; write `ctx: Context` to receive the request's Context"
    )


def test_a_ctx_parameter_annotated_as_context_is_not_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    mcp = MCPServer("Quiet")
    with caplog.at_level(logging.WARNING, logger="mcpdi"):

        @mcp.tool()
        def lookup(title: str, ctx: mcpdi.Context) -> str:
            return title

    assert caplog.records == []


def a_connection() -> str:
    return "connection"


def test_one_resolver_with_two_scopes_in_one_server_is_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    mcp = MCPServer("Scopes")
    with caplog.at_level(logging.WARNING, logger="mcpdi"):

        @mcp.tool()
        def first(conn: Annotated[str, Resolve(a_connection, scope="app")]) -> str:
            return conn

        @mcp.tool()
        def second(conn: Annotated[str, Resolve(a_connection)]) -> str:
            return conn

        @mcp.tool()
        def third(conn: Annotated[str, Resolve(a_connection, scope="app")]) -> str:
            return conn

    (record,) = caplog.records
    assert re.sub(r"\(.*:\d+\)", "(<here>)", record.getMessage()) == (
        "resolver a_connection (<here>) has scope 'app' in tool 'first' and 'round' in tool 'second': "
        "each gets its own value and lifetime; give every Resolve(a_connection) one scope"
    )
