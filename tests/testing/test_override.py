"""`override`: a resolver replaced in every plan that uses it, for a block, and restored after."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated

import pytest
from inline_snapshot import snapshot

from mcpdi import InvalidSignature, MCPServer, Resolve
from mcpdi.testing import Overrides, override

pytestmark = pytest.mark.anyio


def current_user() -> str:
    return "alice"


def greeting(user: Annotated[str, Resolve(current_user)]) -> str:
    return f"Hello {user}"


def server() -> MCPServer:
    mcp = MCPServer("Greeter")

    @mcp.tool()
    def greet(text: Annotated[str, Resolve(greeting)]) -> str:
        return text

    @mcp.tool()
    def whoami(user: Annotated[str, Resolve(current_user)]) -> str:
        return user

    @mcp.tool()
    def ping() -> str:
        return "pong"

    @mcp.prompt()
    def welcome(user: Annotated[str, Resolve(current_user)]) -> str:
        return f"Welcome {user}"

    @mcp.resource("users://me")
    def me(user: Annotated[str, Resolve(current_user)]) -> str:
        return user

    return mcp


def bob() -> str:
    return "bob"


async def text_of(mcp: MCPServer, tool: str) -> str:
    result = await mcp.call_tool(tool)
    return result.content[0].text  # type: ignore[union-attr]


async def test_every_tool_prompt_and_resource_using_the_resolver_runs_the_replacement() -> None:
    mcp = server()
    with override(mcp, current_user, bob):
        assert await text_of(mcp, "greet") == "Hello bob"
        assert await text_of(mcp, "whoami") == "bob"
        assert mcp.registered_tool("greet").plan.steps[0].fn is bob
    assert await text_of(mcp, "greet") == "Hello alice"
    assert await text_of(mcp, "whoami") == "alice"


async def test_prompts_and_resources_see_the_override() -> None:
    from mcpdi.testing import InMemoryClient

    mcp = server()
    with override(mcp, current_user, bob):
        async with mcp.running() as runner:
            client = InMemoryClient(runner)
            prompt = await client.request("prompts/get", {"name": "welcome"})
            resource = await client.request("resources/read", {"uri": "users://me"})
    assert prompt.result["messages"][0]["content"]["text"] == "Welcome bob"
    assert resource.result["contents"][0]["text"] == "bob"


async def test_the_originals_come_back_after_an_exception() -> None:
    mcp = server()
    before = mcp.registered_tool("greet")
    with pytest.raises(RuntimeError, match="boom"), override(mcp, current_user, bob):
        raise RuntimeError("boom")
    assert mcp.registered_tool("greet") is before
    assert await text_of(mcp, "greet") == "Hello alice"


async def test_untouched_tools_keep_their_plan_and_other_servers_are_not_affected() -> None:
    mcp, other = server(), server()
    ping = mcp.registered_tool("ping")
    with override(mcp, current_user, bob):
        assert mcp.registered_tool("ping") is ping
        assert await text_of(other, "whoami") == "alice"


async def test_nested_overrides_combine_and_unwind_in_order() -> None:
    mcp = server()

    def loud_greeting(user: Annotated[str, Resolve(current_user)]) -> str:
        return f"HELLO {user.upper()}"

    with override(mcp, greeting, loud_greeting):
        assert await text_of(mcp, "greet") == "HELLO ALICE"
        with override(mcp, current_user, bob):
            assert await text_of(mcp, "greet") == "HELLO BOB"
        assert await text_of(mcp, "greet") == "HELLO ALICE"
    assert await text_of(mcp, "greet") == "Hello alice"


def test_a_replacement_that_cannot_be_filled_fails_when_overriding() -> None:
    mcp = server()
    before = mcp.registered_tool("whoami")

    def needs_a_token(token: str) -> str:
        return token

    with pytest.raises(InvalidSignature) as caught, override(mcp, current_user, needs_a_token):
        pass
    assert "parameter 'token' cannot be filled" in str(caught.value)
    assert mcp.registered_tool("whoami") is before


def test_overriding_a_resolver_nobody_uses_is_an_error() -> None:
    def stranger() -> str:
        return "?"

    with pytest.raises(ValueError, match="uses resolver") as caught, override(server(), stranger, bob):
        pass
    message = re.sub(r"\(/\S+:\d+\)", "(FILE:LINE)", str(caught.value))
    assert message == snapshot(
        "no tool, prompt or resource of server 'Greeter' uses resolver "
        "test_overriding_a_resolver_nobody_uses_is_an_error.<locals>.stranger (FILE:LINE); "
        "pass the very function named in Resolve(...), not a copy, a wrapper or a function "
        "of the same name from another module"
    )


def test_override_needs_callables_and_an_mcp_server() -> None:
    with pytest.raises(TypeError, match="needs a callable replacement, got 'bob'"):
        override(server(), current_user, "bob").__enter__()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs an MCPServer, got str"):
        override("server", current_user, bob)  # type: ignore[arg-type]


@pytest.fixture
def overrides() -> Iterator[Overrides]:
    with Overrides() as active:
        yield active


GREETER = server()


async def test_a_fixture_holds_overrides_until_the_test_ends(overrides: Overrides) -> None:
    overrides(GREETER, current_user, bob)
    assert await text_of(GREETER, "whoami") == "bob"


async def test_the_next_test_sees_the_original_resolver() -> None:
    assert await text_of(GREETER, "whoami") == "alice"


def test_monkeypatching_a_resolver_is_not_an_override(monkeypatch: pytest.MonkeyPatch) -> None:
    # Plans hold the function itself, read at registration: rebinding the module name changes nothing.
    monkeypatch.setattr(f"{__name__}.current_user", bob)
    assert GREETER.registered_tool("whoami").plan.steps[0].fn.__name__ == "current_user"
