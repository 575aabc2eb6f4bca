"""All-scalar argument models: the same `inputSchema` as pydantic's, the build waits for the first call."""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ValidationError, create_model

from mcpdi import Header, MCPServer
from mcpdi._arguments import ArgumentsModel, build_arguments_model
from mcpdi.engine import Argument

from .conftest import connect

EMPTY = inspect.Parameter.empty
KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _argument(name: str, annotation: Any, default: Any = EMPTY) -> Argument:
    return Argument(name, annotation, default, KEYWORD)


def _pydantic_schema(name: str, arguments: tuple[Argument, ...]) -> dict[str, Any]:
    """What pydantic itself writes for the same fields, on a model built at once."""
    fields: dict[str, Any] = {
        a.name: (a.annotation, ...) if a.required else (a.annotation, a.default) for a in arguments
    }
    return create_model(name, __base__=ArgumentsModel, **fields).model_json_schema()


SCALAR_SIGNATURES = {
    "no arguments": (),
    "one string": (_argument("title", str),),
    "every scalar, required": tuple(
        _argument(n, t) for n, t in (("s", str), ("i", int), ("f", float), ("b", bool))
    ),
    "defaults of each type": (
        _argument("title", str),
        _argument("label", str, "x"),
        _argument("count", int, 3),
        _argument("ratio", float, 0.5),
        _argument("loud", bool, False),
    ),
    "only defaults": (_argument("count", int, -1), _argument("name", str, "")),
    "names that titles rewrite": (
        _argument("max_results", int),
        _argument("trailing_", str),
        _argument("x2y", int, 0),
        _argument("camelCase", str),
        _argument("ÉLAN_vital", str),
        _argument("a__b", float, 1e300),
    ),
    "required after optional": (_argument("first", str, "a"), _argument("second", int)),
}


@pytest.mark.parametrize("case", SCALAR_SIGNATURES)
def test_an_all_scalar_model_publishes_exactly_the_schema_pydantic_writes(case: str) -> None:
    arguments = SCALAR_SIGNATURES[case]
    model = build_arguments_model("toolArguments", arguments, owner="tool", location="here")
    written = model.model_json_schema()
    assert json.dumps(written) == json.dumps(_pydantic_schema("toolArguments", arguments))
    assert model.__pydantic_complete__ is False  # not built by publishing its schema


def test_the_published_schema_is_a_copy_the_caller_may_change() -> None:
    model = build_arguments_model("tArguments", (_argument("title", str),), owner="t", location="here")
    model.model_json_schema()["properties"]["title"]["type"] = "integer"
    assert model.model_json_schema()["properties"]["title"] == {"title": "Title", "type": "string"}


def test_other_schema_options_are_pydantics_own() -> None:
    arguments = (_argument("count", int, 3),)
    model = build_arguments_model("tArguments", arguments, owner="t", location="here")
    twin = create_model("tArguments", __base__=ArgumentsModel, count=(int, 3))
    assert model.model_json_schema(mode="serialization") == twin.model_json_schema(mode="serialization")


def test_a_deferred_model_validates_on_first_use_and_refuses_bad_values_as_before() -> None:
    arguments = (_argument("title", str), _argument("count", int, 2))
    model = build_arguments_model("tArguments", arguments, owner="t", location="here")
    assert model.__pydantic_validator__.validate_python({"title": "Dune"}).count == 2
    with pytest.raises(ValidationError) as raised:
        model.model_validate({"title": "Dune", "count": "many"})
    assert raised.value.errors()[0]["loc"] == ("count",)
    assert raised.value.errors()[0]["type"] == "int_parsing"


class Shelf(BaseModel):
    row: int


@pytest.mark.parametrize(
    "argument",
    [
        _argument("title", Annotated[str, Header("Title")]),
        _argument("shelf", Shelf),
        _argument("tags", list[str]),
        _argument("limit", int, None),
        _argument("limit", int, True),
        _argument("ratio", float, 1),
        _argument("ratio", float, float("inf")),
        _argument("json", str),  # shadows BaseModel.json: an alias, pydantic's schema
        _argument("anything", EMPTY),
    ],
    ids=repr,
)
def test_any_other_argument_builds_the_model_at_registration(argument: Argument) -> None:
    model = build_arguments_model("tArguments", (argument,), owner="t", location="here")
    assert model.__pydantic_complete__ is True


@pytest.mark.anyio
async def test_a_tool_with_scalar_arguments_lists_its_schema_and_validates_its_first_call(
    protocol_version: str,
) -> None:
    mcp = MCPServer("shop")

    @mcp.tool()
    def reserve(title: str, copies: int = 1, gift: bool = False) -> str:
        return f"{copies} x {title}{' (gift)' if gift else ''}"

    assert mcp.tool_input_schema("reserve") == {
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "copies": {"default": 1, "title": "Copies", "type": "integer"},
            "gift": {"default": False, "title": "Gift", "type": "boolean"},
        },
        "required": ["title"],
        "title": "reserveArguments",
        "type": "object",
    }
    async with connect(mcp, protocol_version) as client:
        listed = (await client.send("tools/list"))["result"]["tools"]
        refused = await client.call_tool("reserve", {"title": "Dune", "copies": "many"})
        answered = await client.call_tool("reserve", {"title": "Dune", "gift": True})
    assert [tool["inputSchema"] for tool in listed] == [mcp.tool_input_schema("reserve")]
    assert refused.result["isError"] is True
    assert "copies\n  Input should be a valid integer" in refused.result["content"][0]["text"]
    assert answered.result["content"] == [{"type": "text", "text": "1 x Dune (gift)"}]
