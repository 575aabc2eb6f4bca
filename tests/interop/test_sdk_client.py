"""The official Python client (`mcp` 2.3.0) against mcpdi's server, over stdio and HTTP, in every mode.

What mcpdi's client does alike is checked for both clients in `test_either_client.py`.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from interop_clients import any_client, text_of
from interop_servers import RecordingApp, mcpdi_app, serve_app
from mcp import Client as SdkClient
from mcp.shared.exceptions import MCPError as SdkMCPError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["legacy", "2026-07-28", "auto"]
TRANSPORTS = ["http", "stdio"]


@pytest.fixture(params=TRANSPORTS)
def target(request: pytest.FixtureRequest) -> Any:
    if request.param == "http":
        return request.getfixturevalue("mcpdi_http_url")
    return request.getfixturevalue("mcpdi_stdio_command")


@asynccontextmanager
async def sdk_client(target: Any, mode: str, **options: Any) -> AsyncGenerator[SdkClient]:
    async with any_client("sdk", target, mode, **options) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_connects_in_the_era_it_asks_for(target: Any, mode: str) -> None:
    async with sdk_client(target, mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        if mode == "2026-07-28":
            return  # a pinned SDK client sends no server/discover, so it knows no server identity
        assert client.server_info is not None
        assert (client.server_info.name, client.instructions) == (
            "mcpdi-server",
            "mcpdi's interop test server.",
        )


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_lists_and_calls_tools(target: Any, mode: str) -> None:
    async with sdk_client(target, mode) as client:
        tools = await client.list_tools()
        assert {"add", "greet", "favourite", "query", "slow"} <= {tool.name for tool in tools.tools}
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert (text_of(result), result.is_error) == ("3", False)


async def test_a_modern_sdk_client_without_elicitation_gets_the_missing_capability_error(target: Any) -> None:
    async with sdk_client(target, "2026-07-28") as client:
        with pytest.raises(SdkMCPError) as caught:
            await client.call_tool("greet", {"greeting": "Hello"})
        assert caught.value.error.code == -32021


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_sees_progress_and_logs(target: Any, mode: str) -> None:
    logs: list[Any] = []
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    with warnings.catch_warnings():  # the SDK deprecates logging at 2026-07-28, and still serves it
        warnings.simplefilter("ignore")
        async with sdk_client(target, mode, logging_callback=on_log, log_level="info") as client:
            result = await client.call_tool("slow", {"n": 2}, progress_callback=on_progress)
    assert text_of(result) == "done"
    assert logs == ["log 1", "log 2"]
    assert reports == [(1, 2, "step 1"), (2, 2, "step 2")]


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
async def test_a_fresh_sdk_client_is_refused_with_32020_then_relists_and_succeeds(mode: str) -> None:
    app = RecordingApp(mcpdi_app())
    async with serve_app(app) as url, sdk_client(url, mode) as client:
        app.exchanges.clear()
        result = await client.call_tool("query", {"region": "us-west1", "q": "x"})
        assert text_of(result) == "us-west1:x:10"
    assert app.exchanges == [("tools/call", 400), ("tools/list", 200), ("tools/call", 200)]


async def test_a_legacy_sdk_client_sends_no_param_headers_and_is_not_refused() -> None:
    app = RecordingApp(mcpdi_app())
    async with serve_app(app) as url, sdk_client(url, "legacy") as client:
        result = await client.call_tool("query", {"region": "us-west1", "q": "x"})
        assert text_of(result) == "us-west1:x:10"
    assert ("tools/call", 400) not in app.exchanges
