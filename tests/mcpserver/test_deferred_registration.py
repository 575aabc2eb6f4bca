"""What registration leaves for first use: built as pydantic builds it, once, failing where it did."""

from __future__ import annotations

import enum
import inspect
import json
import re
import sys
import threading
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, Union

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

import mcpdi._arguments
import mcpdi._output._convert
import mcpdi._resources._compiled
from mcpdi import Header, MCPServer, Resolve
from mcpdi._arguments import ArgumentsModel, build_arguments_model, plan_arguments
from mcpdi._deferred import Deferred
from mcpdi._output._convert import plan_output, plan_output_later
from mcpdi.engine import Argument, InvalidSignature

from .conftest import connect

EMPTY = inspect.Parameter.empty
KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shelf(BaseModel):
    row: int
    label: str = "A"


class Book(BaseModel):
    title: str = Field(description="As printed on the cover")
    shelf: Shelf | None = None
    tags: list[str] = []


LEAVES: list[Any] = [
    str,
    int,
    float,
    bool,
    bytes,
    None,
    Any,
    Literal["a", "b"],
    Literal[1, True, None],
    Colour,
    Level,
    Shelf,
    Book,
    Annotated[str, Field(description="As printed on the cover")],
    Annotated[int, Field(title="Copies", examples=[1, 2])],
]


def _shapes() -> st.SearchStrategy[Any]:
    leaves = st.sampled_from(LEAVES)

    def grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            inner.map(lambda t: list[t]),
            inner.map(lambda t: typing.FrozenSet[t]),  # noqa: UP006
            inner.map(lambda t: dict[str, t]),
            inner.map(lambda t: dict[int, t]),
            inner.map(lambda t: tuple[t, ...]),
            st.tuples(inner, inner).map(lambda ts: tuple[ts[0], ts[1]]),
            inner.map(lambda t: Optional[t]),  # noqa: UP045
            st.tuples(inner, inner).map(lambda ts: Union[ts[0], ts[1]]),  # noqa: UP007
            inner.map(lambda t: typing.List[t]),  # noqa: UP006
        )

    return st.recursive(leaves, grow, max_leaves=4)


def _argument(name: str, annotation: Any, default: Any = EMPTY) -> Argument:
    return Argument(name, annotation, default, KEYWORD)


def _eager_model(name: str, arguments: tuple[Argument, ...]) -> type[ArgumentsModel]:
    """What pydantic builds at once for the same fields (the path registration took before)."""
    fields: dict[str, Any] = {
        a.name: (a.annotation, ...) if a.required else (a.annotation, a.default) for a in arguments
    }
    return create_model(name, __base__=ArgumentsModel, **fields)


def _same(left: Any, right: Any) -> bool:
    return json.dumps(left) == json.dumps(right)


def _tool(name: str, parameters: dict[str, Any], returns: Any) -> Callable[..., Any]:
    """A function `name(**parameters) -> returns` with these annotations, returning its arguments."""

    def tool(**kwargs: Any) -> Any:
        return kwargs

    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, KEYWORD, annotation=hint) for name, hint in parameters.items()],
        return_annotation=returns,
    )
    tool.__annotations__ = {**parameters, "return": returns}
    return tool


# -- (a) what is built later is what pydantic builds at once -------------------------------


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=_shapes(), optional=st.booleans())
def test_a_deferred_argument_model_and_schema_are_the_ones_pydantic_builds_at_once(
    shape: Any, optional: bool
) -> None:
    arguments = (_argument("title", str), _argument("value", shape, None if optional else EMPTY))
    planned = plan_arguments("toolArguments", arguments, owner="tool", location="here")
    assert planned.deferred
    assert not planned.model_built
    assert not planned.schema_built
    eager = _eager_model("toolArguments", arguments)
    assert _same(planned.schema(), eager.model_json_schema())
    assert _same(planned.model().model_json_schema(), eager.model_json_schema())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=_shapes())
def test_a_deferred_output_schema_is_the_one_planned_at_once(shape: Any) -> None:
    later = plan_output_later("tool", shape, location="here")
    now = plan_output("tool", shape, location="here")
    assert _same(later.get().schema, now.schema)
    assert later.get().wrap == now.wrap


@pytest.mark.parametrize("returns", [str, int, float, bool])
def test_a_plain_return_writes_the_output_schema_pydantic_writes_and_waits_with_its_model(
    returns: type,
) -> None:
    later = plan_output_later("reserve", returns, location="here")
    output = later.get()
    pydantic_twin = TypeAdapter[Any](create_model("reserveOutput", result=returns)).json_schema()
    assert _same(output.schema, pydantic_twin)
    assert output.adapter is not None
    assert not output.adapter.built


@pytest.mark.anyio
async def test_a_listed_tool_publishes_what_an_eagerly_built_one_did(protocol_version: str) -> None:
    mcp = MCPServer("shop")
    shapes: dict[str, Any] = {
        "scalars": ({"title": str, "count": int}, int),
        "containers": ({"tags": list[str], "prices": dict[str, float]}, list[int]),
        "choices": ({"colour": Colour, "mode": Literal["fast", "slow"]}, Optional[Level]),  # noqa: UP045
        "models": ({"book": Book}, Shelf),
        "nothing": ({}, None),
    }
    for name, (parameters, returns) in shapes.items():
        mcp.add_tool(_tool(name, parameters, returns))
    for name in shapes:
        tool = mcp.registered_tool(name)
        assert tool.arguments.deferred
        assert not tool.wire_built
        assert not tool.arguments.model_built
    async with connect(mcp, protocol_version) as client:
        listed = {tool["name"]: tool for tool in (await client.send("tools/list"))["result"]["tools"]}
    for name, (parameters, returns) in shapes.items():
        arguments = tuple(_argument(key, hint) for key, hint in parameters.items())
        eager = _eager_model(f"{name}Arguments", arguments).model_json_schema()
        output_schema = plan_output(name, returns, location="here").schema
        tool = mcp.registered_tool(name)
        assert _same(tool.input_schema, eager)
        assert _same(tool.wire.output_schema, output_schema)
        # The wire form passes the version's schema, which orders keys its own way.
        assert json.dumps(listed[name]["inputSchema"], sort_keys=True) == json.dumps(eager, sort_keys=True)
        assert json.dumps(listed[name].get("outputSchema"), sort_keys=True) == json.dumps(
            output_schema, sort_keys=True
        )
    assert not mcp.registered_tool("scalars").arguments.model_built  # its schema is written, no model built


@pytest.mark.anyio
async def test_a_deferred_prompt_and_template_list_and_answer_as_before(protocol_version: str) -> None:
    mcp = MCPServer("shop")

    @mcp.prompt(description="Ask about a book")
    def ask(title: str, tone: str = "kind") -> str:
        return f"Tell me about {title}, {tone}ly."

    @mcp.resource("books://{title}/stock")
    def stock(title: str) -> str:
        return f"{title}: 3"

    assert not mcp._registry.prompts["ask"].deferred_wire.built  # pyright: ignore[reportPrivateUsage]
    assert not mcp._registry.resources["books://{title}/stock"].deferred_wire.built  # pyright: ignore[reportPrivateUsage]
    async with connect(mcp, protocol_version) as client:
        prompts = (await client.send("prompts/list"))["result"]["prompts"]
        templates = (await client.send("resources/templates/list"))["result"]["resourceTemplates"]
        missing = await client.send("prompts/get", {"name": "ask", "arguments": {}})
        read = await client.send("resources/read", {"uri": "books://Dune/stock"})
    assert prompts[0]["arguments"] == [
        {"name": "title", "required": True},
        {"name": "tone", "required": False},
    ]
    assert templates[0]["uriTemplate"] == "books://{title}/stock"
    assert missing["error"]["message"] == "Missing required arguments for prompt 'ask': title"
    assert read["result"]["contents"][0]["text"] == "Dune: 3"


@pytest.mark.anyio
async def test_a_templates_regex_waits_for_the_first_read_and_matches_as_one_built_at_once(
    protocol_version: str,
) -> None:
    mcp = MCPServer("shop")
    template = "books://{shelf}/{title}/stock.{fmt}"

    @mcp.resource(template)
    def stock(shelf: str, title: str, fmt: str) -> str:
        return f"{shelf}|{title}|{fmt}"

    registered = mcp._registry.resources[template]  # pyright: ignore[reportPrivateUsage]
    assert registered.pattern is not None
    assert not registered.pattern.built
    eager = re.compile(r"books://(?P<shelf>[^/?#&,]*)/(?P<title>[^/?#&,]*)/stock\.(?P<fmt>[^/?#&,]*)")
    uris = [
        "books://a/Dune/stock.txt",
        "books://a/b/Dune/stock.txt",
        "books://a/Dune/stockXtxt",
        "books://a//stock.x",
    ]
    async with connect(mcp, protocol_version) as client:
        reads = [await client.send("resources/read", {"uri": uri}) for uri in uris]
    assert registered.pattern.built
    for uri, read in zip(uris, reads, strict=True):
        found = eager.fullmatch(uri)
        if found is None:
            assert read["error"]["message"] == f"Unknown resource: {uri}"
        else:
            assert read["result"]["contents"][0]["text"] == "|".join(found.groups())
        assert registered.match(uri) == (found.groupdict() if found else None)


# -- (b) what registration refused before, it still refuses, with the same words ---------------


class Opaque:
    """A class pydantic can check by isinstance but not render as JSON Schema."""


class NotYet(BaseModel):
    child: Missing  # noqa: F821  # pyright: ignore[reportUndefinedVariable]


class OldDict(typing.TypedDict):
    a: int


def _eager_error(arguments: tuple[Argument, ...]) -> BaseException:
    with pytest.raises(Exception) as raised:  # noqa: PT011  # whichever pydantic raises
        build_arguments_model("tArguments", arguments, owner="t", location="here").model_json_schema()
    return raised.value


@pytest.mark.parametrize(
    "annotation",
    [Opaque, NotYet, list[Opaque], dict[str, NotYet], Optional[Opaque]]  # noqa: UP045
    + ([OldDict] if sys.version_info < (3, 12) else []),
    ids=repr,
)
def test_an_annotation_pydantic_cannot_publish_still_fails_at_registration_with_its_message(
    annotation: Any,
) -> None:
    expected = _eager_error((_argument("x", annotation),))
    mcp = MCPServer("shop")
    with pytest.raises(Exception) as raised:  # noqa: PT011  # the same type as before, whichever it is
        mcp.add_tool(_tool("t", {"x": annotation}, str))
    assert type(raised.value) is type(expected)
    assert str(raised.value) == str(expected)


def test_an_invalid_header_marking_in_a_nested_model_is_still_refused_at_registration() -> None:
    class Region(BaseModel):
        code: str = Field(json_schema_extra={"x-mcp-header": "Region"})

    mcp = MCPServer("shop")
    with pytest.raises(Exception, match="x-mcp-header found at a schema position not reachable"):
        mcp.add_tool(_tool("t", {"region": Region}, str))


def test_a_marked_header_is_still_read_at_registration() -> None:
    mcp = MCPServer("shop")
    mcp.add_tool(_tool("t", {"region": Annotated[str, Header("Region")]}, str))
    tool = mcp.registered_tool("t")
    assert not tool.arguments.deferred
    assert [param.header_name for param in tool.header_params] == ["Mcp-Param-Region"]


def test_structured_output_of_an_unpublishable_return_still_fails_at_registration() -> None:
    mcp = MCPServer("shop")
    with pytest.raises(Exception, match="cannot be published as an outputSchema"):
        mcp.add_tool(_tool("t", {}, Opaque), structured_output=True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"icons": [{"src": 3}]}, "src"),
        ({"title": 3}, "title"),
        ({"description": ["not", "text"]}, "description"),
    ],
)
def test_wrongly_typed_prompt_fields_still_fail_at_registration(
    options: dict[str, Any], message: str
) -> None:
    mcp = MCPServer("shop")
    with pytest.raises(ValidationError, match=message):
        mcp.prompt(name="ask", **options)(_tool("ask", {"title": str}, str))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"icons": [{"src": 3}]}, "src"),
        ({"title": 3}, "title"),
        ({"mime_type": 3}, "mime_type"),
        ({"annotations": {"priority": "high"}}, "priority"),
        ({"meta": ["not", "a", "dict"]}, "_meta"),
    ],
)
def test_wrongly_typed_template_fields_still_fail_at_registration(
    options: dict[str, Any], message: str
) -> None:
    mcp = MCPServer("shop")
    with pytest.raises(ValidationError, match=message):
        mcp.resource("books://{title}", name="read", **options)(_tool("read", {"title": str}, str))


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("books://{title", "a '{' that is never closed"),
        ("books://{title}/{title}", "the variable 'title' appears twice"),
        ("books://{ti-tle}", "'ti-tle' is not a variable name"),
        (
            "books://{author}",
            r"the URI's parameters \['author'\] must be the function's arguments \['title'\]",
        ),
    ],
)
def test_a_malformed_template_is_still_refused_at_registration(template: str, message: str) -> None:
    mcp = MCPServer("shop")
    with pytest.raises(InvalidSignature, match=message):
        mcp.resource(template)(_tool("read", {"title": str}, str))
    assert mcp._registry.resources == {}  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"icons": [{"src": 3}]}, "src"),
        ({"annotations": {"readOnlyHint": "often"}}, "readOnlyHint"),
        ({"meta": ["not", "a", "dict"]}, "_meta"),
    ],
)
def test_wrongly_typed_tool_fields_still_fail_at_registration(options: dict[str, Any], message: str) -> None:
    mcp = MCPServer("shop")
    with pytest.raises(ValidationError, match=message):
        mcp.add_tool(_tool("t", {"title": str}, str), **options)


@pytest.mark.parametrize(
    "annotation",
    [
        Annotated[int, Field(gt=0)],
        Annotated[str, Field(pattern="^[a-z]+$", description="lower case")],
        Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        Annotated[str, Field(alias="name")],
        Annotated[str, Header("Region")],
    ],
    ids=repr,
)
def test_annotated_extras_beyond_a_description_build_the_model_at_registration(annotation: Any) -> None:
    planned = plan_arguments("tArguments", (_argument("x", annotation),), owner="t", location="here")
    assert not planned.deferred


def test_a_default_that_is_not_plain_json_builds_the_model_at_registration() -> None:
    arguments = (_argument("count", int, Field(3, description="How many")),)
    planned = plan_arguments("tArguments", arguments, owner="t", location="here")
    assert not planned.deferred
    assert planned.model_built


# -- (c) concurrent first uses build once ---------------------------------------------------


def _race(first_use: Callable[[], tuple[Any, ...]], threads: int = 8) -> list[tuple[Any, ...]]:
    """What `first_use` returned in each of `threads` threads let go at the same moment."""
    barrier = threading.Barrier(threads)
    seen: list[tuple[Any, ...]] = []

    def run() -> None:
        barrier.wait()
        seen.append(first_use())

    started = [threading.Thread(target=run) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join(timeout=30)
    return seen


def test_racing_threads_build_a_tools_model_schema_and_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    original = mcpdi._arguments.build_arguments_model  # pyright: ignore[reportPrivateUsage]
    wrapped = mcpdi._output._convert.choose_output_model  # pyright: ignore[reportPrivateUsage]

    def counting_model(*args: Any, **kwargs: Any) -> Any:
        built.append("arguments")
        return original(*args, **kwargs)

    def counting_output(*args: Any, **kwargs: Any) -> Any:
        built.append("output")
        return wrapped(*args, **kwargs)

    monkeypatch.setattr(mcpdi._arguments, "build_arguments_model", counting_model)
    monkeypatch.setattr(mcpdi._output._convert, "choose_output_model", counting_output)
    mcp = MCPServer("shop")
    mcp.add_tool(_tool("t", {"tags": list[str]}, list[Shelf]))
    tool = mcp.registered_tool("t")
    assert built == []
    seen = _race(lambda: (id(tool.wire), id(tool.arguments_model), id(tool.output)))
    assert len(seen) == 8
    assert len(set(seen)) == 1
    assert sorted(built) == ["arguments", "output"]


def test_racing_threads_build_a_prompts_and_a_templates_entries_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    original = mcpdi._arguments.build_arguments_model  # pyright: ignore[reportPrivateUsage]
    pattern = mcpdi._resources._compiled._template_pattern  # pyright: ignore[reportPrivateUsage]

    def counting_model(model_name: str, *args: Any, **kwargs: Any) -> Any:
        built.append(model_name)
        return original(model_name, *args, **kwargs)

    def counting_pattern(template: str) -> Any:
        built.append(template)
        return pattern(template)

    monkeypatch.setattr(mcpdi._arguments, "build_arguments_model", counting_model)
    monkeypatch.setattr(mcpdi._resources._compiled, "_template_pattern", counting_pattern)
    mcp = MCPServer("shop")
    mcp.prompt()(_tool("ask", {"tags": list[str]}, str))
    mcp.resource("books://{title}")(_tool("read", {"title": str}, str))
    prompt = mcp._registry.prompts["ask"]  # pyright: ignore[reportPrivateUsage]
    template = mcp._registry.resources["books://{title}"]  # pyright: ignore[reportPrivateUsage]
    assert built == []

    def first_use() -> tuple[Any, ...]:
        found = template.match("books://Dune")
        return (
            id(prompt.wire),
            id(prompt.arguments_model),
            id(template.wire),
            id(template.arguments_model),
            found,
        )

    seen = _race(first_use)
    assert len(seen) == 8
    assert all(found == {"title": "Dune"} for *_, found in seen)
    assert len({tuple(entry[:-1]) for entry in seen}) == 1
    assert sorted(built) == ["askArguments", "books://{title}", "readArguments"]


@pytest.mark.anyio
async def test_concurrent_first_calls_and_lists_all_succeed(protocol_version: str) -> None:
    mcp = MCPServer("shop")

    async def shelve(tags: list[str], shelf: Shelf) -> dict[str, Shelf]:
        return {tag: shelf for tag in tags}

    mcp.add_tool(shelve)
    answers: list[dict[str, Any]] = []
    async with connect(mcp, protocol_version) as client:

        async def call() -> None:
            outcome = await client.call_tool("shelve", {"tags": ["a", "b"], "shelf": {"row": 2}})
            answers.append(outcome.result)

        async def listing() -> None:
            answers.append((await client.send("tools/list"))["result"])

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(call)
                    group.start_soon(listing)
    calls = [answer for answer in answers if "content" in answer]
    lists = [answer for answer in answers if "tools" in answer]
    assert len(calls) == 10
    assert len(lists) == 10
    shelf = {"row": 2, "label": "A"}
    assert all(answer["structuredContent"] == {"a": shelf, "b": shelf} for answer in calls)
    assert all(answer == lists[0] for answer in lists)


def test_a_value_deferred_with_one_argument_is_built_from_that_argument_once() -> None:
    built: list[tuple[int, ...]] = []

    def build(argument: tuple[int, ...]) -> int:
        built.append(argument)
        if len(built) == 1:
            msg = "first build fails"
            raise RuntimeError(msg)
        return sum(argument)

    deferred = Deferred.of(build, (1, 2))  # a tuple argument is one argument, not two
    with pytest.raises(RuntimeError, match="first build fails"):
        deferred.get()
    assert not deferred.built
    assert [deferred.get(), deferred.get()] == [3, 3]
    assert built == [(1, 2), (1, 2)]


def test_a_failed_build_is_raised_to_its_caller_and_tried_again() -> None:
    attempts: list[int] = []

    def build() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            msg = "first build fails"
            raise RuntimeError(msg)
        return 42

    deferred = Deferred(build)
    with pytest.raises(RuntimeError, match="first build fails"):
        deferred.get()
    assert not deferred.built
    assert deferred.get() == 42
    assert deferred.get() == 42
    assert len(attempts) == 2


# -- (d) a model built later validates as the one built at once ------------------------------


BAD_VALUES: dict[str, tuple[Any, Any]] = {
    "list of int": (list[int], ["1", "two"]),
    "dict of float": (dict[str, float], {"a": "much"}),
    "literal": (Literal["fast", "slow"], "medium"),
    "enum": (Colour, "green"),
    "optional int": (Optional[int], "many"),  # noqa: UP045
    "model": (Shelf, {"row": "top"}),
    "nested model": (Book, {"shelf": {"label": 3}}),
    "tuple": (tuple[int, str], [1]),
    "union": (Union[int, list[bool]], "x"),  # noqa: UP007
}


@pytest.mark.parametrize("case", BAD_VALUES)
@pytest.mark.anyio
async def test_a_model_built_on_the_first_call_refuses_values_with_the_same_text(
    case: str, protocol_version: str
) -> None:
    annotation, bad = BAD_VALUES[case]
    mcp = MCPServer("shop")
    mcp.add_tool(_tool("t", {"value": annotation}, str))
    assert mcp.registered_tool("t").arguments.deferred
    eager = _eager_model("tArguments", (_argument("value", annotation),))
    with pytest.raises(ValidationError) as raised:
        eager.model_validate({"value": bad})
    async with connect(mcp, protocol_version) as client:
        refused = await client.call_tool("t", {"value": bad})
    assert refused.result["isError"] is True
    assert refused.result["content"][0]["text"] == f"Error executing tool t: {raised.value}"


@pytest.mark.anyio
async def test_a_deferred_tool_with_resolvers_runs_and_shapes_its_output(protocol_version: str) -> None:
    mcp = MCPServer("shop")

    def shelf_of(title: str) -> Shelf:
        return Shelf(row=len(title))

    @mcp.tool()
    def locate(title: str, shelf: Annotated[Shelf, Resolve(shelf_of)]) -> Shelf:
        return shelf

    @mcp.tool()
    def count(title: str) -> float:
        return 2  # an int where a float is published: validated through the model built now

    async with connect(mcp, protocol_version) as client:
        located = await client.call_tool("locate", {"title": "Dune"})
        counted = await client.call_tool("count", {"title": "Dune"})
    assert located.result["structuredContent"] == {"row": 4, "label": "A"}
    assert counted.result["structuredContent"] == {"result": 2.0}


def test_tools_registered_at_module_level_share_the_modules_namespace_instead_of_copies() -> None:
    source = (
        "from mcpdi import MCPServer\n"
        "mcp = MCPServer('shop')\n"
        "@mcp.tool()\n"
        "def first(title: str) -> str:\n"
        "    return title\n"
        "@mcp.tool()\n"
        "def second(title: str) -> str:\n"
        "    return title\n"
    )
    module: dict[str, Any] = {"__name__": "shop_module"}
    exec(compile(source, "<shop_module>", "exec"), module)
    mcp: MCPServer = module["mcp"]
    assert mcp.registered_tool("first").localns is module
    assert mcp.registered_tool("second").localns is module


def test_a_tool_registered_inside_a_function_keeps_a_snapshot_of_its_locals() -> None:
    mcp = MCPServer("shop")

    def local_shelf(title: str) -> Shelf:
        return Shelf(row=len(title))

    @mcp.tool()
    def locate(title: str, shelf: Annotated[Shelf, Resolve(local_shelf)]) -> int:
        return shelf.row

    namespace = mcp.registered_tool("locate").localns
    assert namespace is not None
    assert namespace["local_shelf"] is local_shelf
    assert namespace is not locals()
