"""SDK-style tests of resolver and context details on a ported server: errors, params, meta, **kwargs."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import FLAVOURS, MODES, Flavour, load, outcome, transcripts
from pydantic import ValidationError

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_validation_error_inside_a_resolver_is_a_crash_caused_by_it(flavour: Flavour) -> None:
    server = load("resolver_edges", flavour)
    with pytest.raises(server.UnexpectedToolError, match=r"^Error executing tool count_pages$") as caught:
        await server.mcp.call_tool("count_pages", {})
    assert isinstance(caught.value.__cause__, ValidationError)


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_bad_arguments_are_a_tool_error_and_a_validation_error_of_the_body_a_crash(
    flavour: Flavour,
) -> None:
    server = load("resolver_edges", flavour)
    with pytest.raises(
        server.ToolError, match=r"^Error executing tool count_words: 1 validation error"
    ) as bad:
        await server.mcp.call_tool("count_words", {"text": "many", "limit": "none"})
    assert not isinstance(bad.value, server.UnexpectedToolError)
    assert isinstance(bad.value.__cause__, ValidationError)
    with pytest.raises(server.UnexpectedToolError, match=r"^Error executing tool count_words$") as crashed:
        await server.mcp.call_tool("count_words", {"text": "many", "limit": 3})
    assert isinstance(crashed.value.__cause__, ValidationError)


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_resolver_crash_has_the_resolvers_own_exception_as_its_cause(flavour: Flavour) -> None:
    server = load("resolver_edges", flavour)
    with pytest.raises(server.UnexpectedToolError, match=r"^Error executing tool shelve$") as caught:
        await server.mcp.call_tool("shelve", {})
    assert type(caught.value.__cause__) is LookupError
    assert str(caught.value.__cause__) == "no shelf for it"


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_resolver_refusing_with_tool_error_is_a_tool_error_caused_by_it(flavour: Flavour) -> None:
    server = load("resolver_edges", flavour)
    with pytest.raises(server.ToolError, match=r"^Error executing tool sell: not for sale$") as caught:
        await server.mcp.call_tool("sell", {})
    assert not isinstance(caught.value, server.UnexpectedToolError)
    assert type(caught.value.__cause__) is server.ToolError
    assert str(caught.value.__cause__) == "not for sale"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_cycle_is_refused_with_the_sdks_words_first(flavour: Flavour) -> None:
    server = load("resolver_edges", flavour)
    with pytest.raises(server.InvalidSignature, match=r"^Resolver 'ping' has a cyclic dependency"):
        server.register_cycle()


async def context_and_meta(client: Client) -> dict[str, Any]:
    asking = await outcome(client.call_tool("who_is_asking", {}))
    listed = await client.list_tools()
    return {
        "tag schema": next(tool.input_schema for tool in listed.tools if tool.name == "tag"),
        "tag": await outcome(client.call_tool("tag", {"title": "Dune", "labels": "classic"})),
        "tag without labels": await outcome(client.call_tool("tag", {"title": "Dune"})),
        "who": asking["content"][0]["text"],
        "catalogue": await outcome(client.read_resource("edges://catalogue")),
        "cover": await outcome(client.read_resource("edges://covers/dune")),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_client_params_and_resource_meta_read_as_in_the_sdk(mode: str) -> None:
    seen = await transcripts("resolver_edges", mode, context_and_meta)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["who"].startswith("mcp speaking ")
    # **labels is one required argument named labels, as the SDK reads it
    assert seen["mcpdi"]["tag schema"]["required"] == ["title", "labels"]
    assert seen["mcpdi"]["tag"]["content"][0]["text"] == "Dune: [('labels', 'classic')]"
    assert seen["mcpdi"]["tag without labels"]["isError"] is True
    (catalogue,) = seen["mcpdi"]["catalogue"]["contents"]
    assert catalogue == {
        "uri": "edges://catalogue",
        "mimeType": "text/plain",
        "text": "Dune, Emma",
        "_meta": {"edition": 2},
    }
    (cover,) = seen["mcpdi"]["cover"]["contents"]
    assert (cover["mimeType"], cover["_meta"]) == ("image/png", {"kind": "cover"})
