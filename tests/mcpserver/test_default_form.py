"""`p: T = Resolve(fn)` means `p: Annotated[T, Resolve(fn)]`: hidden from the model, filled by `fn`."""

# ruff: noqa: E501, B008  # long pinned error texts; the default form under test is a call in a default

from __future__ import annotations

import re
from typing import Annotated

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import InvalidSignature, MCPServer, Resolve
from mcpdi.types import TextContent

HERE = r"[^\s()]*test_default_form\.py:\d+"


class User(BaseModel):
    name: str


def load_user() -> User:
    return User(name="ada")


def greeting_for(user: User = Resolve(load_user)) -> str:  # pyright: ignore[reportArgumentType]
    return f"Hello {user.name}"


def default_form_server() -> MCPServer:
    mcp = MCPServer("Default form")

    @mcp.tool()
    def whoami(user: User = Resolve(load_user)) -> str:  # pyright: ignore[reportArgumentType]
        return user.name

    @mcp.tool()
    def greet(greeting: str = Resolve(greeting_for)) -> str:  # pyright: ignore[reportArgumentType]
        return greeting

    return mcp


def text_of(error: pytest.ExceptionInfo[InvalidSignature]) -> str:
    return re.sub(HERE, "<here>", str(error.value))


def test_a_parameter_defaulting_to_resolve_is_not_published_to_the_model() -> None:
    mcp = default_form_server()
    assert mcp.registered_tool("whoami").input_schema == {
        "properties": {},
        "title": "whoamiArguments",
        "type": "object",
    }
    assert [b.parameter for b in mcp.registered_tool("whoami").plan.resolved_params] == ["user"]


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(("tool", "text"), [("whoami", "ada"), ("greet", "Hello ada")])
async def test_a_client_cannot_pose_as_another_user_through_the_default_form(
    protocol_version: str, tool: str, text: str
) -> None:
    result = await default_form_server().call_tool(
        tool, {"user": {"name": "mallory"}}, protocol_version=protocol_version
    )
    assert result.is_error is False
    assert result.content == [TextContent(type="text", text=text)]


def test_a_bare_resolve_annotation_names_the_fix() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def whoami(user: Resolve(load_user)) -> str:  # type: ignore[valid-type]  # pyright: ignore[reportInvalidTypeForm]
            return str(user)

    assert caught.value.parameter == "user"
    assert text_of(caught) == snapshot(
        "Parameter 'user' of 'whoami' (<here>) is annotated with Resolve(load_user) itself, which is a marker, not a type. Write `user: Annotated[T, Resolve(load_user)]` with T the type the resolver returns."
    )


def test_a_default_marker_next_to_an_annotated_marker_is_two_resolvers() -> None:
    mcp = MCPServer("Errors")
    with pytest.raises(InvalidSignature) as caught:

        @mcp.tool()
        def whoami(user: Annotated[User, Resolve(load_user)] = Resolve(load_user)) -> str:  # pyright: ignore[reportArgumentType]
            return user.name

    assert text_of(caught) == snapshot(
        "Parameter 'user' of 'whoami' (<here>) has 2 Resolve(...) markers (load_user, load_user); one resolver fills a parameter. Keep one marker, or write a resolver that depends on the others and combines their values."
    )


@pytest.mark.anyio
async def test_the_engine_reads_the_default_form_as_the_annotated_form() -> None:
    from mcpdi.engine import compile_plan

    plan = compile_plan(greeting_for)
    assert plan.arguments == ()
    assert await plan.run({}) == "Hello ada"
