"""How `MCPServer`'s own `call_tool`, `read_resource`, ... run: one in-memory client per call.

Each call enters the server's lifespan, speaks to its `Runner` exactly as a client would
(either era), and answers the questions resolvers ask from the caller's `answers`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_types import SERVER_INFO_META_KEY, BlobResourceContents, ReadResourceResult

from mcpdi.lowlevel._errors import MCPError

if TYPE_CHECKING:
    from mcpdi._server import MCPServer
    from mcpdi.testing._memory import Script

__all__ = ("Answers", "ReadResourceContents", "answer_script", "contents_of", "request_in_memory")

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
    from mcpdi.testing._memory import ALL_CAPABILITIES, InMemoryClient

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
