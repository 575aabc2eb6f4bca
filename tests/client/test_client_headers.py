"""x-mcp-header on the client: list, drop invalid tools, mirror `Mcp-Param-*`, re-list once on -32020."""

from __future__ import annotations

from typing import Any

import pytest
from client_fakes import ScriptedChannel, discovered, initialized, scripted_client

from mcpdi import MCPError
from mcpdi.lowlevel import HEADER_MISMATCH

pytestmark = pytest.mark.anyio

QUERY = {
    "name": "query",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "q": {"type": "string"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
        },
    },
}
BROKEN = {
    "name": "broken",
    "inputSchema": {"type": "object", "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}},
}
PLAIN = {"name": "plain", "inputSchema": {"type": "object"}}
DONE: dict[str, Any] = {"resultType": "complete", "content": []}


async def listing(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return {"resultType": "complete", "tools": [QUERY, BROKEN, PLAIN], "ttlMs": 0, "cacheScope": "private"}


def checking_server(*, mismatches: int) -> ScriptedChannel:
    """tools/call answers -32020 while it lacks Mcp-Param-Region, at most `mismatches` times."""
    left = [mismatches]

    async def call(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        if "mcp-param-region" not in headers and left[0] > 0:
            left[0] -= 1
            msg = "Mcp-Param-Region header is missing but the request body's 'region' argument is present"
            raise MCPError(HEADER_MISMATCH, msg)
        return DONE

    return ScriptedChannel(
        {"server/discover": discovered, "initialize": initialized, "tools/list": listing, "tools/call": call}
    )


async def test_a_modern_http_client_drops_tools_with_invalid_annotations(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with scripted_client(checking_server(mismatches=0)) as client:
        tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == ["query", "plain"]
    assert "dropping tool 'broken': invalid x-mcp-header annotation" in caplog.text


async def test_a_stdio_or_legacy_client_keeps_every_tool() -> None:
    channel = checking_server(mismatches=0)
    channel.is_http = False
    async with scripted_client(channel) as client:
        assert len((await client.list_tools()).tools) == 3
    async with scripted_client(checking_server(mismatches=0), mode="legacy") as client:
        assert len((await client.list_tools()).tools) == 3


async def test_listed_annotations_are_mirrored_with_the_spec_encoding() -> None:
    channel = checking_server(mismatches=0)
    async with scripted_client(channel) as client:
        await client.list_tools()
        await client.call_tool("query", {"region": "Zürich", "q": "x", "limit": 5})
        await client.call_tool("query", {"region": "us-west1", "q": "x", "limit": None})
    first, second = (sent.headers for sent in channel.sent if sent.method == "tools/call")
    assert {k: v for k, v in first.items() if k.startswith("mcp-param-")} == {
        "mcp-param-region": "=?base64?WsO8cmljaA==?=",
        "mcp-param-limit": "5",
    }
    assert {k: v for k, v in second.items() if k.startswith("mcp-param-")} == {"mcp-param-region": "us-west1"}


async def test_a_header_rejection_makes_a_fresh_client_relist_and_resend_once() -> None:
    channel = checking_server(mismatches=1)
    async with scripted_client(channel) as client:
        result = await client.call_tool("query", {"region": "eu", "q": "x"})
    assert result.content == []
    assert channel.methods()[1:] == ["tools/call", "tools/list", "tools/call"]
    assert channel.sent[-1].headers["mcp-param-region"] == "eu"
    assert channel.sent[-1].message["id"] != channel.sent[1].message["id"]


async def test_a_second_header_rejection_is_raised() -> None:
    channel = checking_server(mismatches=2)
    async with scripted_client(channel) as client:
        await client.list_tools()
        with pytest.raises(MCPError) as caught:
            await client.call_tool("plain", {"region": "eu"})
    assert caught.value.code == HEADER_MISMATCH
    assert channel.methods()[1:] == ["tools/list", "tools/call", "tools/list", "tools/call"]


async def test_a_legacy_client_raises_a_header_rejection_without_relisting() -> None:
    channel = checking_server(mismatches=1)
    async with scripted_client(channel, mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.call_tool("query", {"region": "eu"})
    assert "tools/list" not in channel.methods()


async def test_relisting_pages_until_the_tool_is_found() -> None:
    pages: dict[str | None, tuple[list[Any], str | None]] = {
        None: ([PLAIN], "p2"),
        "p2": ([QUERY], "p3"),
        "p3": ([], None),
    }

    async def paged(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        tools, cursor = pages[params.get("cursor")]
        page: dict[str, Any] = {"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"}
        return page if cursor is None else {**page, "nextCursor": cursor}

    channel = checking_server(mismatches=1)
    channel.handlers["tools/list"] = paged
    async with scripted_client(channel) as client:
        await client.call_tool("query", {"region": "eu"})
    cursors = [sent.params.get("cursor") for sent in channel.sent if sent.method == "tools/list"]
    assert cursors == [None, "p2"]
