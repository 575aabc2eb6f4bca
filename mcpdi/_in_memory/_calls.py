"""How `MCPServer`'s own `call_tool`, `get_prompt`, `read_resource`, ... run, in memory.

`call_tool` calls the server's `tools/call` handler directly (`_direct`); the others speak to
its `Runner` exactly as a client would (either era). The questions resolvers ask are answered
from the caller's `answers`.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_types import (
    SERVER_INFO_META_KEY,
    BlobResourceContents,
    CallToolRequestParams,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ReadResourceRequestParams,
    ReadResourceResult,
)

from mcpdi._errors import ResourceError, ResourceNotFoundError
from mcpdi._tools._failures import raise_tool_failure
from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError

if TYPE_CHECKING:
    from mcpdi._context import Context
    from mcpdi._in_memory._client import Script
    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = (
    "Answers",
    "ReadResourceContents",
    "answer_script",
    "call_tool",
    "contents_of",
    "get_prompt",
    "read_resource",
    "read_resource_in",
    "request_in_memory",
)

ToolHandler = Callable[
    ["ServerRequestContext[Any]", CallToolRequestParams], Awaitable[CallToolResult | InputRequiredResult]
]
ResourceHandler = Callable[
    ["ServerRequestContext[Any]", ReadResourceRequestParams],
    Awaitable[ReadResourceResult | InputRequiredResult],
]

Answers = Mapping[Any, Any] | Callable[[str, Mapping[str, Any] | None], Any]
"""A map from a resolver, an `inputRequests` key or a method name to an answer; or one callable."""


@dataclass(frozen=True, slots=True)
class ReadResourceContents:
    """One item `MCPServer.read_resource` returns: text or bytes, and its MIME type."""

    content: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


def contents_of(result: ReadResourceResult) -> list[ReadResourceContents]:
    """A `resources/read` result as Python values: text as str, blobs decoded to bytes."""
    contents: list[ReadResourceContents] = []
    for item in result.contents:
        if isinstance(item, BlobResourceContents):
            contents.append(ReadResourceContents(base64.b64decode(item.blob), item.mime_type, item.meta))
        else:
            contents.append(ReadResourceContents(item.text, item.mime_type, item.meta))
    return contents


def answer_script(what: str, answers: Answers | None, resolvers: Mapping[str, Any]) -> Script:
    """The client side of the questions `what` asks, answered from `answers`."""

    def script(key: str | None, method: str, params: Mapping[str, Any] | None) -> Any:
        if answers is None:
            msg = f"{what} asked {method!r}; pass answers=... to answer it"
            raise LookupError(msg)
        if callable(answers):
            return answers(method, params)
        for candidate in (key, resolvers.get(key or ""), method):
            if candidate is not None and candidate in answers:
                answer = answers[candidate]
                return answer(params) if callable(answer) else answer
        msg = f"no answer for {method!r} (key {key!r}) in answers={answers!r}"
        raise LookupError(msg)

    return script


async def request_in_memory(
    server: MCPServer[Any],
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    script: Script | None = None,
    protocol_version: str = "2026-07-28",
    capabilities: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One request to `server` through its runner; the result, or the `MCPError` it answered."""
    # The test kit is imported by the first in-memory request, not by every server's start.
    from mcpdi._in_memory._client import ALL_CAPABILITIES, InMemoryClient

    async with server.running() as runner:
        client = InMemoryClient(
            runner,
            protocol_version=protocol_version,
            capabilities=ALL_CAPABILITIES if capabilities is None else capabilities,
            script=script,
            headers=headers,
        )
        exchange = await client.request(method, params)
    if "error" in exchange.response:
        error = exchange.error
        raise MCPError(error["code"], error["message"], error.get("data"))
    return _without_envelope(exchange.result)


def _without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """The result as the handler made it: the 2026-07-28 envelope's server identity removed."""
    meta: dict[str, Any] | None = result.get("_meta")
    if not meta or SERVER_INFO_META_KEY not in meta:
        return result
    rest = {key: value for key, value in meta.items() if key != SERVER_INFO_META_KEY}
    trimmed = {key: value for key, value in result.items() if key != "_meta"}
    if rest:
        trimmed["_meta"] = rest
    return trimmed


def _resolvers_of(server: MCPServer[Any], name: str) -> dict[str, Any]:
    """The tool's resolvers by wire key: `call_tool`'s answers may name a resolver function."""
    try:
        plan = server.registered_tool(name).plan
    except KeyError:
        return {}
    return {step.key: step.fn for step in plan.steps}


async def call_tool(
    server: MCPServer[Any],
    handler: ToolHandler,
    name: str,
    arguments: Mapping[str, Any] | None,
    context: Context[Any, Any] | None,
    *,
    answers: Answers | None,
    protocol_version: str,
    capabilities: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    max_rounds: int,
) -> CallToolResult:
    """`MCPServer.call_tool`: the tool's result; a failed call raises `ToolError` with its cause.

    With a `context` the tool runs inside that request, through `handler` (no middleware).
    """
    causes: list[Exception] = []
    if context is not None:
        params = CallToolRequestParams(name=name, arguments=dict(arguments or {}))
        request = dataclasses.replace(context.request_context, on_failure=causes.append)
        outcome = await handler(request, params)
        if isinstance(outcome, InputRequiredResult):
            msg = f"tool {name!r} asked for input; call it without a context to answer its questions"
            raise MCPError(INVALID_PARAMS, msg)
        result = outcome
    else:
        from mcpdi._in_memory._direct import call_tool_directly

        result = await call_tool_directly(
            server,
            server.server,
            name,
            arguments or {},
            script=answer_script(f"tool {name!r}", answers, _resolvers_of(server, name)),
            protocol_version=protocol_version,
            capabilities=capabilities,
            headers=headers,
            on_failure=causes.append,
            max_rounds=max_rounds,
        )
    if result.is_error:
        raise_tool_failure(result, causes)
    return result


async def get_prompt(
    server: MCPServer[Any],
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    answers: Answers | None,
    protocol_version: str,
) -> GetPromptResult:
    """`MCPServer.get_prompt`: the prompt rendered as `prompts/get` would."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    raw = await request_in_memory(
        server,
        "prompts/get",
        params,
        script=answer_script(f"prompt {name!r}", answers, {}),
        protocol_version=protocol_version,
    )
    return GetPromptResult.model_validate(raw)


async def read_resource(
    server: MCPServer[Any], uri: str, *, answers: Answers | None, protocol_version: str
) -> list[ReadResourceContents]:
    """`MCPServer.read_resource`: the contents `resources/read` would answer, blobs as bytes."""
    raw = await request_in_memory(
        server,
        "resources/read",
        {"uri": str(uri)},
        script=answer_script(f"resource {uri!r}", answers, {}),
        protocol_version=protocol_version,
    )
    return contents_of(ReadResourceResult.model_validate(raw))


async def read_resource_in(
    handler: ResourceHandler, context: Context[Any, Any], uri: str
) -> list[ReadResourceContents]:
    """`MCPServer.read_resource_in`: the resource read inside `context`'s request, failing as
    `ResourceError`s (so that a tool reading a missing resource reports a tool error)."""
    params = ReadResourceRequestParams(uri=uri)  # pyright: ignore[reportArgumentType]
    try:
        result = await handler(context.request_context, params)
    except MCPError as error:
        failure = ResourceNotFoundError if error.code == INVALID_PARAMS else ResourceError
        raise failure(error.message) from error
    if isinstance(result, InputRequiredResult):
        msg = f"resource {uri!r} asked for input; ctx.read_resource reads only resources that answer"
        raise ResourceError(msg)
    return contents_of(result)
