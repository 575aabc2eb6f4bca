"""The client side of the interop tests: connecting either client, its answers to the servers' questions."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as types
from mcp import Client as SdkClient
from mcp.client import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

from mcpdi_transport import Client
from mcpdi_transport._client._callbacks import RequestContext

AnyRequestContext = RequestContext | ClientRequestContext


@asynccontextmanager
async def any_client(kind: str, target: Any, mode: str, **options: Any) -> AsyncGenerator[Any]:
    """mcpdi's client (`kind="mcpdi"`) or the official SDK's (`"sdk"`), connected to `target`.

    A target that is an argv list is served on stdio.
    """
    with anyio.fail_after(30):
        if kind == "sdk":
            if isinstance(target, list):
                argv = cast("list[str]", target)
                target = StdioServerParameters(command=argv[0], args=argv[1:])
            async with SdkClient(target, mode=mode, **options) as client:
                yield client
        else:
            # A stdio server's start counts toward its first answer, which on a loaded machine can
            # take longer than the client's default 10 s; the 30 s above bound the whole connection.
            options.setdefault("discover_timeout", 30)
            async with Client(target, mode=mode, **options) as client:
                yield client


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def answer_name(context: AnyRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    if "colour" in params.message:
        return types.ElicitResult(action="accept", content={"colour": "teal"})
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def decline(context: AnyRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def answer_llm(
    context: AnyRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="hi!"),
        model="test-model",
        stop_reason="endTurn",
    )


async def answer_roots(context: AnyRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(
        roots=[types.Root.model_validate({"uri": "file:///home/user/project", "name": "project"})]
    )
