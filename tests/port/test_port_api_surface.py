"""`MCPServer`'s own methods behave alike in both flavours: lists, in-memory calls, errors, registration."""

from __future__ import annotations

import logging
import types
from typing import Any

import pytest
from port_harness import FLAVOURS, load, wire

pytestmark = pytest.mark.anyio


@pytest.fixture(params=FLAVOURS)
def server(request: pytest.FixtureRequest) -> types.ModuleType:
    return load("api_surface", request.param)


def describe(items: Any) -> Any:
    return sorted((item["name"], item.get("description")) for item in wire(list(items)))


async def both(method: str, *args: Any) -> tuple[Any, Any]:
    results = [await getattr(load("api_surface", flavour).mcp, method)(*args) for flavour in FLAVOURS]
    return results[0], results[1]


async def test_the_default_name_is_the_sdks() -> None:
    assert load("api_surface", "mcpdi").unnamed_default == load("api_surface", "sdk").unnamed_default


async def test_listing_methods_return_what_the_sdk_returns() -> None:
    for method in ("list_tools", "list_prompts", "list_resources", "list_resource_templates"):
        sdk, ours = await both(method)
        assert wire(list(ours)) == wire(list(sdk)), method
    tools, _ = await both("list_tools")
    assert ("undocumented", "") in describe(tools)  # no docstring: an empty description


async def test_call_tool_returns_the_result_in_memory() -> None:
    sdk, ours = await both("call_tool", "add", {"a": 1, "b": 2})
    assert wire(ours) == wire(sdk)
    assert ours.structured_content == {"total": 3}


@pytest.mark.parametrize(
    ("tool", "arguments", "unexpected", "message"),
    [
        ("refuse", {"reason": "no stock"}, False, "Error executing tool refuse: no stock"),
        ("locked", {}, False, "Error executing tool locked: the vault is locked"),
        ("broken", {}, True, "Error executing tool broken"),
    ],
)
async def test_a_failed_call_raises_tool_error(
    server: types.ModuleType, tool: str, arguments: dict[str, Any], unexpected: bool, message: str
) -> None:
    with pytest.raises(server.ToolError) as caught:
        await server.mcp.call_tool(tool, arguments)
    assert str(caught.value) == message
    assert isinstance(caught.value, server.UnexpectedToolError) is unexpected
    assert caught.value.__cause__ is not None


async def test_invalid_arguments_raise_tool_error_naming_the_tool(server: types.ModuleType) -> None:
    with pytest.raises(server.ToolError, match=r"^Error executing tool add: 1 validation error"):
        await server.mcp.call_tool("add", {"a": "x", "b": 1})


async def test_get_prompt_and_read_resource_in_memory() -> None:
    sdk, ours = await both("get_prompt", "hello", {"name": "Ada"})
    assert wire(ours) == wire(sdk)
    for uri in ("api://motd", "api://users/ada"):
        sdk, ours = await both("read_resource", uri)
        assert [(c.content, c.mime_type) for c in ours] == [(c.content, c.mime_type) for c in sdk]


async def test_remove_tool_of_an_unknown_name_raises_tool_error(server: types.ModuleType) -> None:
    with pytest.raises(server.ToolError, match="Unknown tool: missing"):
        server.mcp.remove_tool("missing")


async def test_a_duplicate_tool_keeps_the_first_and_warns(
    server: types.ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        server.register_duplicates([])
    assert any("already exists: add" in record.getMessage() for record in caplog.records)
    result = await server.mcp.call_tool("add", {"a": 2, "b": 2})
    assert result.structured_content == {"total": 4}
