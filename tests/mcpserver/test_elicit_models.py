"""`Elicit[M]` at registration: any pydantic model registers (`create_model` too), `Elicit[BaseModel]` is checked when it asks; anything else is refused."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

import pydantic
import pytest
from inline_snapshot import snapshot

from mcpdi import Elicit, InvalidSignature, MCPServer, Resolve, UnexpectedToolError
from mcpdi.types import TextContent

HERE = r"[^\s()]*test_elicit_models\.py:\d+"

Made = pydantic.create_model("Made", name=(str, ...), age=(int, 30))
ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)


def ask_made() -> Elicit[Made]:  # pyright: ignore[reportInvalidTypeForm]
    return Elicit("Who?", Made)


def made_model_server() -> MCPServer:
    mcp = MCPServer("Made")

    @mcp.tool()
    def who(person: Annotated[Made, Resolve(ask_made)]) -> str:  # pyright: ignore[reportInvalidTypeForm]
        return f"{person.name} {person.age}"  # pyright: ignore[reportAttributeAccessIssue]

    return mcp


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_a_model_made_by_create_model_is_asked_and_answered(protocol_version: str) -> None:
    answer = {"action": "accept", "content": {"name": "Ada"}}
    result = await made_model_server().call_tool(
        "who", answers={ask_made: answer}, protocol_version=protocol_version
    )
    assert result.content == [TextContent(type="text", text="Ada 30")]


def register_asking(model: Any) -> None:
    def ask() -> Any:
        raise AssertionError

    ask.__annotations__ = {"return": Elicit[model]}
    mcp = MCPServer("Made")

    @mcp.tool()
    def who(person: Annotated[Any, Resolve(ask)]) -> str:
        return str(person)


@pytest.mark.parametrize(
    ("model", "text"),
    [
        (
            int,
            snapshot(
                "Resolver 'ask' (<here>) asks Elicit[int], but a form is described by a pydantic model; write Elicit[M] with M a BaseModel subclass of flat fields"
            ),
        ),
        (
            ModelT,
            snapshot(
                "Resolver 'ask' (<here>) asks Elicit[~ModelT], but a form is described by a pydantic model; write Elicit[M] with M a BaseModel subclass of flat fields"
            ),
        ),
        (
            Made | None,  # pyright: ignore[reportOperatorIssue]
            snapshot(
                "Resolver 'ask' (<here>) asks Elicit[Made | None], but a form is described by a pydantic model; write Elicit[M] with M a BaseModel subclass of flat fields"
            ),
        ),
        (
            pydantic.create_model("Unfinished", later=("NotDefinedAnywhere", ...)),  # pyright: ignore[reportArgumentType]  # a forward reference on purpose
            snapshot(
                "Resolver 'ask' (<here>) asks Elicit[Unfinished], but its JSON schema cannot be built (PydanticUserError: `Unfinished` is not fully defined; you should define `NotDefinedAnywhere`, then call `Unfinished.model_rebuild()`.); define every field's type"
            ),
        ),
    ],
)
def test_an_elicit_of_something_other_than_a_flat_model_is_refused(model: Any, text: str) -> None:
    with pytest.raises(InvalidSignature) as caught:
        register_asking(model)
    assert re.sub(HERE, "<here>", str(caught.value)) == text


class Inner(pydantic.BaseModel):
    x: int


def ask_built(fields: str) -> Elicit[pydantic.BaseModel]:
    if fields == "nested":
        return Elicit("Fill in", pydantic.create_model("Nested", inner=(Inner, ...)))
    form: dict[str, Any] = {name: (str, ...) for name in fields.split(",")}
    return Elicit("Fill in", pydantic.create_model("Form", **form))


def built_form_server() -> MCPServer:
    mcp = MCPServer("Built")

    @mcp.tool()
    def fill(fields: str, form: Annotated[pydantic.BaseModel, Resolve(ask_built)]) -> str:
        return repr(form.model_dump())

    return mcp


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_a_form_built_when_the_resolver_runs_is_checked_then(protocol_version: str) -> None:
    mcp = built_form_server()
    answer = {"action": "accept", "content": {"a": "x", "b": "y"}}
    result = await mcp.call_tool(
        "fill", {"fields": "a,b"}, answers={ask_built: answer}, protocol_version=protocol_version
    )
    assert result.content == [TextContent(type="text", text="{'a': 'x', 'b': 'y'}")]
    with pytest.raises(UnexpectedToolError, match=r"^Error executing tool fill$") as crashed:
        await mcp.call_tool(
            "fill", {"fields": "nested"}, answers={ask_built: answer}, protocol_version=protocol_version
        )
    assert str(crashed.value.__cause__) == snapshot(
        "Nested.inner cannot be asked in a form: it renders as {'$ref': '#/$defs/Inner'}; a form field must be a string, number, integer, boolean or enum (use one of those, or ask for it in a separate question)"
    )
