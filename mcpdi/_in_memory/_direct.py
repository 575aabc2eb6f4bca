"""`MCPServer.call_tool`'s path: the server's `tools/call` handler called with models, no JSON-RPC.

What a transport adds around the handler (framing, the envelope, dumping the result to a dict
and sieving it) is the runner's subject, tested with `ScriptedClient`; a test that calls a
tool wants its `CallToolResult`, as cheaply as the tool allows. The handler, its context, the
multi-round loop of 2026-07-28 and the mid-call questions of the handshake era are the real ones.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ClientCapabilities,
    Implementation,
    InputRequiredResult,
)
from pydantic import ValidationError

from mcpdi._in_memory._client import ALL_CAPABILITIES, MODERN, Script, ScriptedPeer, wire_answer
from mcpdi._in_memory._lifespan import session_of
from mcpdi.lowlevel._client_rounds import InputRequired, drive_rounds, read_input_required
from mcpdi.lowlevel._connection import Connection
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._envelope import Envelope
from mcpdi.lowlevel._errors import INVALID_PARAMS, METHOD_NOT_FOUND, MCPError
from mcpdi.lowlevel._server import Server

__all__ = ("call_tool_directly",)

_CLIENT_INFO = Implementation(name="in-memory", version="0")
_IDS = itertools.count(1)


class _Client:
    """What one protocol version and set of capabilities fix for every call: parsed once."""

    __slots__ = ("capabilities", "envelope", "stream", "version")

    def __init__(self, version: str, capabilities: Mapping[str, Any]) -> None:
        self.version = version
        self.capabilities = ClientCapabilities.model_validate(dict(capabilities))
        self.stream: Connection | None = None
        self.envelope: Envelope | None = None
        if version >= MODERN:
            self.envelope = Envelope(version, self.capabilities, _CLIENT_INFO, None)
        else:
            stream = Connection.for_stream()
            stream.era = "legacy"
            stream.protocol_version = version
            stream.client_capabilities = self.capabilities
            stream.client_info = _CLIENT_INFO
            stream.initialized = True
            self.stream = stream


_CLIENTS: dict[tuple[str, str | None], _Client] = {}


def _client(version: str, capabilities: Mapping[str, Any] | None) -> _Client:
    key = (version, None if capabilities is None else json.dumps(capabilities, sort_keys=True, default=str))
    client = _CLIENTS.get(key)
    if client is None:
        if len(_CLIENTS) > 64:
            _CLIENTS.clear()
        client = _CLIENTS[key] = _Client(version, ALL_CAPABILITIES if capabilities is None else capabilities)
    return client


def _read_round(result: CallToolResult | InputRequiredResult, what: str) -> CallToolResult | InputRequired:
    """A final result as it is; an `input_required` one read from its wire form, as any client reads it."""
    if not isinstance(result, InputRequiredResult):
        return result
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return cast("InputRequired", read_input_required(wire, what))  # its resultType is always input_required


async def call_tool_directly(
    server: Any,
    lowlevel: Server[Any],
    name: str,
    arguments: Mapping[str, Any],
    *,
    script: Script,
    protocol_version: str,
    capabilities: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    principal: Any = None,
    on_failure: Callable[[Exception], None] | None = None,
    max_rounds: int = 10,
) -> CallToolResult:
    """Call `name` through `lowlevel`'s `tools/call` handler with the lifespan of `server`'s session."""
    runner = await session_of(server).runner()
    entry = lowlevel.handler_for("tools/call")
    if entry is None:
        raise MCPError(METHOD_NOT_FOUND, "Method not found: tools/call")
    client = _client(protocol_version, capabilities)
    peer = ScriptedPeer(script, headers)
    try:
        params = CallToolRequestParams(name=name, arguments=dict(arguments))
    except ValidationError as error:
        raise MCPError(INVALID_PARAMS, f"Invalid params for tools/call: {error}") from None

    async def call(params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
        context = ServerRequestContext.for_request(
            runner.lifespan_context,
            Connection.for_modern_request() if client.stream is None else client.stream,
            peer,
            "tools/call",
            request_id=next(_IDS),
            envelope=client.envelope,
            principal=principal,
            on_failure=on_failure,
        )
        return await entry.handler(context, params)

    what = f"tools/call {name!r}"

    async def send(answers: dict[str, Any] | None, state: str | None) -> CallToolResult | InputRequired:
        retry = CallToolRequestParams(
            name=name, arguments=dict(arguments), input_responses=answers, request_state=state
        )
        return _read_round(await call(retry), what)

    async def answer(key: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return wire_answer(script(key, method, params))

    first = _read_round(await call(params), what)
    return await drive_rounds(first, send=send, answer=answer, max_rounds=max_rounds, what=what)
