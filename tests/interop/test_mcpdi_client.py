"""mcpdi's client against the official SDK's server (`mcp` 2.3.0) and mcpdi's own, every transport and mode.

Both servers offer the same tools (`servers/interop_server.py`). What the official client does alike
is checked for both clients in `test_either_client.py`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from inline_snapshot import snapshot
from interop_clients import answer_name, any_client, text_of
from interop_servers import target_of

from mcpdi import MCPError
from mcpdi_transport import Client, RoundLimitExceeded

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["legacy", "2026-07-28", "auto"]
TARGETS = ["sdk-http", "sdk-stdio", "mcpdi-http", "mcpdi-stdio", "mcpdi-memory"]
NAMES = {
    "sdk": ("sdk-server", "The official SDK's test server."),
    "mcpdi": ("mcpdi-server", "mcpdi's interop test server."),
}


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> Any:
    return target_of(request, request.param)


@asynccontextmanager
async def connected(target: Any, mode: str, **options: Any) -> AsyncGenerator[Client]:
    async with any_client("mcpdi", target, mode, **options) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_connects_in_the_era_the_mode_asks_for(
    target: Any, mode: str, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.params["target"].split("-")[0]
    async with connected(target, mode) as client:
        expected = ("legacy", "2025-11-25") if mode == "legacy" else ("modern", "2026-07-28")
        assert (client.era, client.protocol_version) == expected
        assert client.server_info is not None
        assert (client.server_info.name, client.instructions) == NAMES[kind]
        assert client.server_capabilities.tools is not None


@pytest.mark.parametrize("mode", MODES)
async def test_listing_and_calling_a_tool_returns_its_result(target: Any, mode: str) -> None:
    async with connected(target, mode) as client:
        tools = await client.list_tools()
        assert {"add", "greet", "query", "slow"} <= {tool.name for tool in tools.tools}
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert (text_of(result), result.structured_content, result.is_error) == ("3", {"result": 3}, False)


async def test_a_modern_call_needing_an_undeclared_capability_raises_the_servers_error(target: Any) -> None:
    async with connected(target, "2026-07-28") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("greet", {"greeting": "Hello"})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_a_call_that_needs_more_rounds_than_allowed_names_the_cap(target: Any) -> None:
    async with connected(target, "2026-07-28", elicitation_callback=answer_name, max_rounds=1) as client:
        with pytest.raises(RoundLimitExceeded) as caught:
            await client.call_tool("favourite", {})
        assert str(caught.value) == snapshot(
            "tools/call 'favourite' still asked for input after 1 rounds; "
            "pass max_rounds=N with N > 1 if it legitimately needs more"
        )


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_never_listed_tools_still_calls_a_header_tool(target: Any, mode: str) -> None:
    async with connected(target, mode) as client:
        result = await client.call_tool("query", {"region": "us-west1", "q": "x"})
        assert text_of(result) == "us-west1:x:10"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_and_log_notifications_reach_the_handlers(target: Any, mode: str) -> None:
    seen: list[str] = []
    logs: list[Any] = []

    async def on_message(notification: types.ServerNotification) -> None:
        seen.append(notification.method)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    options: dict[str, Any] = {"message_handler": on_message, "logging_callback": on_log, "log_level": "info"}
    async with connected(target, mode, **options) as client:
        result = await client.call_tool("slow", {"n": 2}, progress_callback=on_progress)
        assert text_of(result) == "done"
    assert logs == ["log 1", "log 2"]
    assert progress == [(1, 2, "step 1"), (2, 2, "step 2")]
    assert seen.count("notifications/message") == 2


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_and_resources_are_listed_and_read(target: Any, mode: str) -> None:
    async with connected(target, mode) as client:
        prompts = await client.list_prompts()
        assert [prompt.name for prompt in prompts.prompts] == ["review"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        assert content.text == "Please review: x = 1"
        resources = await client.list_resources()
        assert [str(resource.uri) for resource in resources.resources] == ["memo://greeting"]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["memo://notes/{topic}"]
        read = await client.read_resource("memo://notes/tea")
        contents = read.contents[0]
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == "notes on tea"
