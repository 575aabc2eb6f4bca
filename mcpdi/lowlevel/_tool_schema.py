"""Where `Runner.tool_input_schema` finds a tool's `inputSchema`: `get_tool_input_schema` or `tools/list`."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import ValidationError

from mcpdi.lowlevel._connection import Connection
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._envelope import Envelope
from mcpdi.lowlevel._errors import NoBackChannel

if TYPE_CHECKING:
    from mcpdi.lowlevel._connection import Peer
    from mcpdi.lowlevel._runner import Runner

__all__ = ("find_tool_input_schema",)

logger = logging.getLogger("mcpdi")

_MAX_PAGES = 100


class _SilentPeer:
    """A peer for the internal `tools/list` run: the caller's headers, notifications go nowhere,
    requests cannot be sent."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Mapping[str, str] | None) -> None:
        self._headers = headers

    @property
    def headers(self) -> Mapping[str, str] | None:
        return self._headers

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        return None

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        raise NoBackChannel(method, "the server is listing its own tools")


async def _from_getter(runner: Runner[Any], name: str) -> Mapping[str, Any] | None:
    getter = runner.server.get_tool_input_schema
    assert getter is not None
    try:
        schema: Any = getter(name)
        if inspect.isawaitable(schema):
            schema = await schema
    except Exception:
        logger.exception("get_tool_input_schema(%r) raised; Mcp-Param headers are not checked", name)
        return None
    return cast("Mapping[str, Any] | None", schema)


async def find_tool_input_schema(
    runner: Runner[Any], name: str, *, meta: Mapping[str, Any] | None, peer: Peer | None
) -> Mapping[str, Any] | None:
    """Tool `name`'s input schema; None when there is no way to know (validation is then skipped)."""
    if runner.server.get_tool_input_schema is not None:
        return await _from_getter(runner, name)
    entry = runner.server.handler_for("tools/list")
    if entry is None:
        return None
    envelope = meta or {}
    version = envelope.get(PROTOCOL_VERSION_META_KEY)
    try:
        capabilities = types.ClientCapabilities.model_validate(
            envelope.get(CLIENT_CAPABILITIES_META_KEY) or {}
        )
    except ValidationError:
        capabilities = types.ClientCapabilities()
    envelope = Envelope(
        protocol_version=version if isinstance(version, str) else LATEST_MODERN_VERSION,
        client_capabilities=capabilities,
        client_info=None,
        log_level=None,
    )
    context = ServerRequestContext.for_request(
        runner.lifespan_context,
        Connection.for_modern_request(),
        _SilentPeer(peer.headers if peer is not None else None),
        "tools/list",
        meta=meta,
        envelope=envelope,
    )
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_MAX_PAGES):
        try:
            params = types.PaginatedRequestParams.model_validate(
                {"cursor": cursor, "_meta": meta}, by_name=False
            )
            raw: Any = await entry.handler(context, params)
            page = (
                raw if isinstance(raw, types.ListToolsResult) else types.ListToolsResult.model_validate(raw)
            )
        except Exception:
            logger.exception("listing tools to find %r failed; Mcp-Param headers are not checked", name)
            return None
        for tool in page.tools:
            if tool.name == name:
                return tool.input_schema
        cursor = page.next_cursor
        if cursor is None or cursor in seen:
            return None
        seen.add(cursor)
    return None
