"""A codec that fails refuses the state (-32602) or the round (-32603), never more, never less."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import mcp_types as t
import pytest
from mcp.server.request_state import InvalidRequestState as SdkInvalidRequestState
from pydantic import BaseModel

from mcpdi import Context, Elicit, HmacCodec, MCPServer, RequestStateSecurity, Resolve

from .conftest import connect

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
KEY = b"k" * 32
INVALID_STATE = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}
INTERNAL = {"code": -32603, "message": "Internal error"}


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


class FlakyCodec:
    """Seals with HMAC, then fails in the way it is told to."""

    def __init__(self, *, open_fails: BaseException | None = None, seal_fails: bool = False) -> None:
        self.inner = HmacCodec([KEY])
        self.open_fails = open_fails
        self.seal_fails = seal_fails
        self.opened_as_text = False

    def seal(self, plaintext: bytes) -> str:
        if self.seal_fails:
            msg = "KMS unreachable at 10.0.0.7 with token s3cr3t"
            raise ConnectionError(msg)
        return self.inner.seal(plaintext)

    def open(self, token: str) -> bytes:
        if self.open_fails is not None:
            raise self.open_fails
        if self.opened_as_text:
            return token  # pyright: ignore[reportReturnType]  # a buggy codec
        return self.inner.open(token)


def server(codec: Any) -> tuple[MCPServer, list[str]]:
    ran: list[str] = []
    mcp = MCPServer("FailClosed", request_state=RequestStateSecurity(codec=codec))

    @mcp.tool()
    def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
        ran.append(who.name)
        return who.name

    @mcp.tool()
    def own_rounds(ctx: Context) -> str | t.InputRequiredResult:
        if ctx.request_state is None:
            ask = {
                "method": "elicitation/create",
                "params": {"message": "Go?", "requestedSchema": {"type": "object", "properties": {}}},
            }
            return t.InputRequiredResult.model_validate({"inputRequests": {"go": ask}, "requestState": "s1"})
        ran.append(ctx.request_state)
        return "done"

    return mcp, ran


async def final_round(
    mcp: MCPServer, codec: FlakyCodec, *, tool: str = "greet", failure: BaseException | None = None
) -> dict[str, Any]:
    """Run the first round, make `codec` fail as told, then send the answer with the state."""
    async with connect(mcp, MODERN) as client:
        first = (await client.send("tools/call", {"name": tool, "arguments": {}}))["result"]
        (key,) = first["inputRequests"]
        codec.open_fails = failure
        return await client.send(
            "tools/call",
            {
                "name": tool,
                "arguments": {},
                "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first["requestState"],
            },
        )


@pytest.mark.parametrize("tool", ["greet", "own_rounds"])
@pytest.mark.parametrize(
    "failure",
    [RuntimeError("KMS down"), SdkInvalidRequestState("seal"), KeyError("kid")],
    ids=["runtime-error", "sdk-invalid-request-state", "key-error"],
)
async def test_a_codec_that_raises_on_open_refuses_the_state(
    tool: str, failure: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    codec = FlakyCodec()
    mcp, ran = server(codec)

    with caplog.at_level(logging.INFO, logger="mcpdi"):
        response = await final_round(mcp, codec, tool=tool, failure=failure)

    assert response["error"] == INVALID_STATE
    assert ran == []
    assert "requestState codec raised while opening a token; refusing it" in caplog.text


async def test_a_codec_that_opens_to_something_else_than_bytes_refuses_the_state() -> None:
    codec = FlakyCodec()
    mcp, ran = server(codec)
    codec.opened_as_text = True
    response = await final_round(mcp, codec)

    assert response["error"] == INVALID_STATE
    assert ran == []


@pytest.mark.parametrize("tool", ["greet", "own_rounds"])
async def test_a_codec_that_raises_on_seal_fails_the_round_with_a_bare_internal_error(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    mcp, _ = server(FlakyCodec(seal_fails=True))

    with caplog.at_level(logging.ERROR, logger="mcpdi"):
        async with connect(mcp, MODERN) as client:
            response = await client.send("tools/call", {"name": tool, "arguments": {}})

    assert response["error"] == INTERNAL
    assert "s3cr3t" not in str(response)
    assert "sealing requestState failed" in caplog.text
    assert "KMS unreachable" in caplog.text  # the operator sees why


async def test_a_codec_that_seals_to_something_else_than_text_fails_the_round() -> None:
    class BytesSealer(FlakyCodec):
        def seal(self, plaintext: bytes) -> str:
            return plaintext  # pyright: ignore[reportReturnType]  # a buggy codec

    mcp, _ = server(BytesSealer())
    async with connect(mcp, MODERN) as client:
        response = await client.send("tools/call", {"name": "greet", "arguments": {}})

    assert response["error"] == INTERNAL


async def test_two_default_servers_of_one_name_do_not_accept_each_others_states() -> None:
    def make() -> MCPServer:
        mcp = MCPServer("Same name")

        @mcp.tool()
        def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
            return who.name

        return mcp

    async with connect(make(), MODERN) as one, connect(make(), MODERN) as two:
        first = (await one.send("tools/call", {"name": "greet", "arguments": {}}))["result"]
        (key,) = first["inputRequests"]
        elsewhere = await two.send(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first["requestState"],
            },
        )

    assert elsewhere["error"] == INVALID_STATE
