"""State codecs are public plug-in points, and the official SDK's spelling of them works too."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from mcp.server.request_state import AESGCMRequestStateCodec
from pydantic import BaseModel

import mcpdi
from mcpdi import (
    AesGcmCodec,
    Elicit,
    HmacCodec,
    InvalidRequestState,
    MCPServer,
    RequestStateSecurity,
    Resolve,
    StateCodec,
)

from .conftest import answers, connect

MODERN = "2026-07-28"
KEY = b"k" * 32
ADA = {"action": "accept", "content": {"name": "Ada"}}


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def greeter(**options: Any) -> MCPServer:
    mcp = MCPServer("Plugins", **options)

    @mcp.tool()
    def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"Hello, {who.name}!"

    return mcp


class CountingUnsealer:
    """A codec written against the official SDK's protocol: `seal` and `unseal`."""

    def __init__(self) -> None:
        self.inner = HmacCodec([KEY])
        self.unsealed = 0

    def seal(self, payload: bytes) -> str:
        return self.inner.seal(payload)

    def unseal(self, token: str) -> bytes:
        self.unsealed += 1
        return self.inner.open(token)


def test_the_codec_names_are_exported_from_the_front_door() -> None:
    assert {"StateCodec", "HmacCodec", "InvalidRequestState"} <= set(mcpdi.__all__)
    codec: StateCodec = HmacCodec([KEY])
    with pytest.raises(InvalidRequestState):
        codec.open("v1.AAAA")


@pytest.mark.anyio
async def test_an_sdk_style_codec_with_unseal_carries_the_rounds() -> None:
    codec = CountingUnsealer()
    mcp = greeter(request_state_security=RequestStateSecurity(codec=codec))

    async with connect(mcp, MODERN, script=answers(elicit=ADA)) as client:
        call = await client.call_tool("greet", {})

    assert call.text == "Hello, Ada!"
    assert call.rounds == 2
    assert codec.unsealed == 1


@pytest.mark.anyio
async def test_the_official_sdks_aes_gcm_codec_plugs_in_unchanged() -> None:
    codec = AESGCMRequestStateCodec([KEY])
    mcp = greeter(request_state_security=RequestStateSecurity(codec=codec))

    async with connect(mcp, MODERN, script=answers(elicit=ADA)) as client:
        call = await client.call_tool("greet", {})

    assert call.text == "Hello, Ada!"


@pytest.mark.anyio
async def test_the_aes_gcm_codec_carries_the_rounds_with_an_opaque_state() -> None:
    mcp = greeter(request_state=RequestStateSecurity(codec=AesGcmCodec([KEY])))

    async with connect(mcp, MODERN, script=answers(elicit=ADA)) as client:
        first = await client.send("tools/call", {"name": "greet", "arguments": {}})
        call = await client.call_tool("greet", {})

    assert first["result"]["requestState"].startswith("a1.")
    assert call.text == "Hello, Ada!"


def test_the_hmac_codec_also_answers_to_the_sdk_name_unseal() -> None:
    codec = HmacCodec([KEY])

    assert codec.unseal(codec.seal(b"payload")) == b"payload"


def test_ephemeral_is_the_sdk_spelling_of_a_keyless_policy() -> None:
    policy = RequestStateSecurity.ephemeral(ttl=60, audience="shop")

    assert policy.is_ephemeral
    assert (policy.ttl, policy.audience) == (60.0, "shop")


def test_the_server_takes_either_spelling_of_the_security_parameter() -> None:
    policy = RequestStateSecurity([KEY])

    assert greeter(request_state_security=policy).request_state is policy
    assert greeter(request_state=policy).request_state is policy
    with pytest.raises(TypeError) as both:
        greeter(request_state=policy, request_state_security=policy)
    assert str(both.value) == snapshot(
        "MCPServer takes request_state= or request_state_security= (the official SDK's name for the same thing), not both"
    )


def test_a_codec_without_an_open_or_unseal_method_is_explained() -> None:
    class SealOnly:
        def seal(self, payload: bytes) -> str:
            return "x"

    with pytest.raises(TypeError) as caught:
        RequestStateSecurity(codec=SealOnly())  # pyright: ignore[reportArgumentType]

    assert str(caught.value) == snapshot(
        "a requestState codec needs seal(bytes) -> str and open(str) -> bytes (or unseal); test_a_codec_without_an_open_or_unseal_method_is_explained.<locals>.SealOnly does not have both"
    )
