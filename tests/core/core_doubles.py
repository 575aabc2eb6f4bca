"""In-memory doubles for driving `Runner.handle` without a transport."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from mcpdi.lowlevel import Connection, Runner, Server, ServerRequestContext

MODERN = "2026-07-28"

ECHO = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def make_server(**handlers: Any) -> Server[Any]:
    options: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    options.update(handlers)
    return Server("core-test", version="0.1.0", instructions="Test server.", **options)


class RecordingPeer:
    """A peer that records what the server sends and answers server requests from a script."""

    def __init__(
        self,
        headers: Mapping[str, str] | None = None,
        answer: Callable[[str, Mapping[str, Any] | None], dict[str, Any]] | None = None,
    ) -> None:
        self.headers = headers
        self.notifications: list[tuple[str, Mapping[str, Any] | None]] = []
        self.requests: list[tuple[str, Mapping[str, Any] | None]] = []
        self._answer = answer

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        self.notifications.append((method, params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        self.requests.append((method, params))
        assert self._answer is not None, "this test did not expect a server-to-client request"
        return self._answer(method, params)


def envelope(version: Any = MODERN, capabilities: Any = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_META_KEY: version,
        CLIENT_CAPABILITIES_META_KEY: {} if capabilities is None else capabilities,
        CLIENT_INFO_META_KEY: {"name": "test-client", "version": "0.0.1"},
    }
    meta.update(extra)
    return meta


def modern_request(
    id_: int | str, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = envelope(**meta)
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": body}


def request(id_: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(id_: int | str = 0, version: str = "2025-11-25", capabilities: Any = None) -> dict[str, Any]:
    return request(
        id_,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "test-client", "version": "0.0.1"},
        },
    )


async def handshake(runner: Runner[Any], connection: Connection, peer: RecordingPeer) -> None:
    """Initialize a legacy connection the way a client does."""
    answer = await runner.handle(initialize(), connection, peer)
    assert answer is not None
    assert "result" in answer
    await runner.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection, peer)
