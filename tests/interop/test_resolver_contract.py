"""The resolver contract seen by the official client (`mcp` 2.3.0) over Streamable HTTP, in both eras:
the default form stays hidden, narrower arguments and fallbacks reach the model as tool errors,
and a session-less handshake-era endpoint says it cannot reach the client."""

# ruff: noqa: E501, B008  # pinned error texts are long; the default form under test is a call in a default

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pydantic
import pytest
from inline_snapshot import snapshot
from interop_clients import answer_name, any_client, text_of
from interop_servers import serve_app
from mcp.shared.exceptions import MCPError as SdkMCPError
from pydantic import BaseModel

from mcpdi import AskModel, Context, Default, Elicit, MCPServer, Resolve

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["legacy", "2026-07-28"]


class Name(BaseModel):
    name: str


Made = pydantic.create_model("Made", name=(str, ...))


def load_name() -> Name:
    return Name(name="server-side")


def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


def ask_made() -> Elicit[Made]:  # pyright: ignore[reportInvalidTypeForm]
    return Elicit("Your name?", Made)


def ask_name_or_default() -> Elicit[Name]:
    return Elicit("Your name?", Name, fallback=Default(Name(name="guest")))


def ask_name_or_model(name: str | None = None) -> Name | Elicit[Name]:
    if name is not None:
        return Name(name=name)
    return Elicit("Your name?", Name, fallback=AskModel())


def greeting_for(name: str) -> str:
    return f"Hello {name}"


def contract_server() -> MCPServer:
    mcp = MCPServer("Contract")

    @mcp.tool()
    def whoami(who: Name = Resolve(load_name)) -> str:  # pyright: ignore[reportArgumentType]
        return who.name

    @mcp.tool()
    def greet(greeting: Annotated[str, Resolve(greeting_for)], name: str | None = None) -> str:
        return greeting

    @mcp.tool()
    def made(who: Annotated[Made, Resolve(ask_made)]) -> str:  # pyright: ignore[reportInvalidTypeForm]
        return who.name  # pyright: ignore[reportAttributeAccessIssue]

    @mcp.tool()
    def asks(who: Annotated[Name, Resolve(ask_name)]) -> str:
        return who.name

    @mcp.tool()
    def defaults(who: Annotated[Name, Resolve(ask_name_or_default)]) -> str:
        return who.name

    @mcp.tool()
    async def asks_now(ctx: Context) -> str:
        who = await ctx.elicit("Your name?", Name)
        return who.action

    @mcp.tool()
    def asks_model(who: Annotated[Name, Resolve(ask_name_or_model)], name: str | None = None) -> str:
        return who.name

    return mcp


@asynccontextmanager
async def served(**options: Any) -> AsyncGenerator[str]:
    async with serve_app(contract_server().streamable_http_app(**options)) as url:
        yield url


@pytest.mark.parametrize("mode", MODES)
async def test_the_default_form_is_hidden_and_a_client_value_is_ignored(mode: str) -> None:
    async with served() as url, any_client("sdk", url, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["whoami"].input_schema.get("properties") == {}
        result = await client.call_tool("whoami", {"who": {"name": "mallory"}})
        assert text_of(result) == "server-side"


@pytest.mark.parametrize("mode", MODES)
async def test_an_argument_a_resolver_takes_narrower_is_a_tool_error_for_the_model(mode: str) -> None:
    async with served() as url, any_client("sdk", url, mode) as client:
        assert text_of(await client.call_tool("greet", {"name": "Ada"})) == "Hello Ada"
        refused = await client.call_tool("greet", {})
        assert refused.is_error
        assert text_of(refused) == snapshot(
            "Error executing tool greet: argument 'name' must be str here (resolver 'greeting_for' takes it), got None: Input should be a valid string"
        )


@pytest.mark.parametrize("mode", MODES)
async def test_a_model_made_by_create_model_is_elicited(mode: str) -> None:
    async with served() as url, any_client("sdk", url, mode, elicitation_callback=answer_name) as client:
        assert text_of(await client.call_tool("made", {})) == "Ada"


@pytest.mark.parametrize("mode", MODES)
async def test_fallbacks_answer_a_client_without_elicitation(mode: str) -> None:
    async with served() as url, any_client("sdk", url, mode) as client:
        assert text_of(await client.call_tool("defaults", {})) == "guest"
        refused = await client.call_tool("asks_model", {})
        assert refused.is_error
        assert text_of(refused) == snapshot(
            "Error executing tool asks_model: the question 'Your name?' cannot reach the client (it did not declare the form elicitation capability); call 'asks_model' again and pass the value as argument 'name'"
        )
        assert text_of(await client.call_tool("asks_model", {"name": "Ada"})) == "Ada"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_with_elicitation_is_asked_despite_a_fallback(mode: str) -> None:
    async with served() as url, any_client("sdk", url, mode, elicitation_callback=answer_name) as client:
        assert text_of(await client.call_tool("defaults", {})) == "Ada"


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_a_sessionless_handshake_endpoint_says_it_cannot_reach_the_client(json_response: bool) -> None:
    options = {"stateless": True, "json_response": json_response}
    async with (
        served(**options) as url,
        any_client("sdk", url, "legacy", elicitation_callback=answer_name) as client,
    ):
        refused = await client.call_tool("asks", {})
        assert refused.is_error
        assert text_of(refused) == snapshot(
            "Error executing tool asks: Resolver 'ask_name' needs to ask the client (elicitation/create), but this connection cannot carry requests to the client; connect over stdio or a streaming HTTP session, or with protocol 2026-07-28"
        )
        assert text_of(await client.call_tool("defaults", {})) == "guest"


async def test_a_sessionless_handshake_endpoint_refuses_an_imperative_question_for_want_of_a_channel() -> (
    None
):
    async with (
        served(stateless=True) as url,
        any_client("sdk", url, "legacy", elicitation_callback=answer_name) as client,
    ):
        with pytest.raises(SdkMCPError) as caught:
            await client.call_tool("asks_now", {})
    assert (caught.value.code, caught.value.message) == snapshot(
        (
            -32600,
            "Cannot send 'elicitation/create' to the client: this endpoint keeps no sessions (stateless=True), so the client's answer could not be routed back; serve with sessions or use protocol 2026-07-28",
        )
    )
