"""Resolvers on prompts and resource templates: they run, and the client can neither see nor set them."""

# pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Context, Elicit, MCPServer, Resolve
from mcpdi.types import PromptMessage, TextContent

from .conftest import answers, connect

pytestmark = pytest.mark.anyio


class Role(BaseModel):
    role: str


def secret_role() -> str:
    return "reader"


def ask_role() -> Elicit[Role]:
    return Elicit("Which role?", Role)


def shop() -> MCPServer:
    mcp = MCPServer("Shop")

    @mcp.prompt()
    def greet(name: str, role: Annotated[str, Resolve(secret_role)]) -> str:
        """Greet someone."""
        return f"hello {name} as {role}"

    @mcp.prompt()
    def greet_asking(name: str, role: Annotated[Role, Resolve(ask_role)]) -> str:
        return f"hello {name} as {role.role}"

    @mcp.resource("books://{title}/stock", mime_type="application/json")
    def stock(title: str, role: Annotated[str, Resolve(secret_role)], ctx: Context) -> dict[str, object]:
        return {"title": title, "role": role}

    @mcp.resource("books://catalogue")
    def catalogue() -> str:
        return "Dune, Neuromancer"

    return mcp


async def test_a_resolved_prompt_parameter_is_not_a_prompt_argument(protocol_version: str) -> None:
    async with connect(shop(), protocol_version) as client:
        listing = await client.send("prompts/list")
        got = await client.request(
            "prompts/get", {"name": "greet", "arguments": {"name": "ada", "role": "admin"}}
        )
    greet = listing["result"]["prompts"][0]
    assert greet["name"] == "greet"
    assert greet["arguments"] == [{"name": "name", "required": True}]
    assert got.result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "hello ada as reader"}}
    ]


async def test_a_prompt_resolver_can_ask(protocol_version: str) -> None:
    script = answers(elicit={"action": "accept", "content": {"role": "editor"}})
    async with connect(shop(), protocol_version, script=script) as client:
        got = await client.request("prompts/get", {"name": "greet_asking", "arguments": {"name": "ada"}})
    assert got.result["messages"][0]["content"]["text"] == "hello ada as editor"
    assert got.rounds == (2 if protocol_version >= "2026-07-28" else 1)


async def test_a_prompt_without_its_required_argument_is_refused(protocol_version: str) -> None:
    async with connect(shop(), protocol_version) as client:
        got = await client.request("prompts/get", {"name": "greet", "arguments": {}})
    assert got.error == snapshot(
        {"code": -32602, "message": "Missing required arguments for prompt 'greet': name"}
    )


async def test_a_resource_template_takes_only_the_uri_parameters(protocol_version: str) -> None:
    async with connect(shop(), protocol_version) as client:
        templates = await client.send("resources/templates/list")
        fixed = await client.send("resources/list")
        read = await client.request("resources/read", {"uri": "books://Dune/stock"})
        plain = await client.request("resources/read", {"uri": "books://catalogue"})
        missing = await client.request("resources/read", {"uri": "books://nothing"})
    assert [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]] == ["books://{title}/stock"]
    assert [r["uri"] for r in fixed["result"]["resources"]] == ["books://catalogue"]
    assert read.result["contents"] == [
        {
            "uri": "books://Dune/stock",
            "mimeType": "application/json",
            "text": '{\n  "title": "Dune",\n  "role": "reader"\n}',
        }
    ]
    assert plain.result["contents"][0]["text"] == "Dune, Neuromancer"
    assert missing.error == snapshot(
        {"code": -32602, "message": "Unknown resource: books://nothing", "data": {"uri": "books://nothing"}}
    )


async def test_a_resource_template_resolver_can_ask(protocol_version: str) -> None:
    mcp = MCPServer("Shop")

    @mcp.resource("books://{title}/note")
    def note(title: str, role: Annotated[Role, Resolve(ask_role)]) -> str:
        return f"{title} for {role.role}"

    script = answers(elicit={"action": "accept", "content": {"role": "editor"}})
    async with connect(mcp, protocol_version, script=script) as client:
        read = await client.request("resources/read", {"uri": "books://Dune/note"})
    assert read.result["contents"][0]["text"] == "Dune for editor"
    assert read.rounds == (2 if protocol_version >= "2026-07-28" else 1)


async def test_prompt_results_become_messages(protocol_version: str) -> None:
    mcp = MCPServer("Shop")

    @mcp.prompt()
    def conversation(topic: str) -> list[object]:
        return [
            f"Tell me about {topic}.",
            {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
            PromptMessage(role="user", content=TextContent(type="text", text="Thanks.")),
        ]

    async with connect(mcp, protocol_version) as client:
        got = await client.request("prompts/get", {"name": "conversation", "arguments": {"topic": "Dune"}})
    assert [(m["role"], m["content"]["text"]) for m in got.result["messages"]] == [
        ("user", "Tell me about Dune."),
        ("assistant", "Gladly."),
        ("user", "Thanks."),
    ]


async def test_a_failing_prompt_is_an_internal_error_without_internals(protocol_version: str) -> None:
    mcp = MCPServer("Shop")

    @mcp.prompt()
    def broken() -> str:
        raise RuntimeError("secret")

    async with connect(mcp, protocol_version) as client:
        got = await client.request("prompts/get", {"name": "broken"})
        unknown = await client.request("prompts/get", {"name": "nope"})
    assert got.error == {"code": -32603, "message": "Error rendering prompt broken"}
    assert unknown.error == {"code": -32602, "message": "Unknown prompt: nope"}
