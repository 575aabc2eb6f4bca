"""The request-state policy spelled the SDK's way: `RequestStateSecurity(bind_principal=...)`,
`.codec`, `.ephemeral()`, and the SDK's refusals for a policy it would not build."""

from __future__ import annotations

import math
from typing import Annotated, Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer as SdkServer
from mcp.server.mcpserver import RequestStateSecurity as SdkPolicy
from port_harness import FLAVOURS, Flavour, load, outcome, serve, text
from pydantic import BaseModel

from mcpdi import (
    AccessToken,
    Elicit,
    HmacCodec,
    InvalidRequestState,
    MCPError,
    MCPServer,
    RequestStateSecurity,
    Resolve,
    ServerRequestContext,
    authenticated_principal,
)

pytestmark = pytest.mark.anyio

KEY = b"a shared request-state key, 32+ bytes"


class Codec:
    """A codec written for the SDK: `seal`/`unseal`, no crypto (enough to build a policy)."""

    def seal(self, payload: bytes) -> str:
        return payload.hex()

    def unseal(self, token: str) -> bytes:
        return bytes.fromhex(token)


def refusal(policy: Any, **options: Any) -> str:
    with pytest.raises(ValueError, match=r"^(RequestStateSecurity takes|request-state ttl)") as refused:
        policy(**options)
    return str(refused.value)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"keys": [KEY], "codec": Codec()},
        {"keys": [KEY], "ttl": 0},
        {"keys": [KEY], "ttl": -5},
        {"keys": [KEY], "ttl": math.nan},
        {"keys": [KEY], "ttl": math.inf},
        {"codec": Codec(), "ttl": -math.inf},
    ],
    ids=["neither keys nor codec", "both", "ttl 0", "ttl negative", "ttl nan", "ttl inf", "ttl -inf"],
)
def test_a_policy_the_sdk_refuses_is_refused_with_its_words(options: dict[str, Any]) -> None:
    assert refusal(RequestStateSecurity, **options) == refusal(SdkPolicy, **options)


def test_the_refusals_read_as_the_sdks() -> None:
    assert refusal(RequestStateSecurity) == "RequestStateSecurity takes exactly one of keys= or codec="
    assert refusal(RequestStateSecurity, keys=[KEY], ttl=math.nan) == (
        "request-state ttl must be a positive finite number, got nan"
    )


@pytest.mark.parametrize("ttl", [0, -1, math.nan, math.inf])
def test_ephemeral_refuses_the_same_ttls(ttl: float) -> None:
    assert refusal(RequestStateSecurity.ephemeral, ttl=ttl) == refusal(SdkPolicy.ephemeral, ttl=ttl)


def test_codec_is_the_one_in_use_as_in_the_sdk() -> None:
    codec = Codec()
    for policy in (RequestStateSecurity, SdkPolicy):
        assert policy(codec=codec).codec is codec
        built_in: Any = policy(keys=[KEY]).codec  # the SDK's is AES-GCM, mcpdi's HMAC
        assert built_in.unseal(built_in.seal(b"state")) == b"state"


def test_ephemeral_is_a_key_of_its_own_with_the_sdks_options() -> None:
    first = RequestStateSecurity.ephemeral(ttl=30, audience="Shop")
    second = RequestStateSecurity.ephemeral()
    assert isinstance(first.codec, HmacCodec)
    assert isinstance(second.codec, HmacCodec)
    token = first.codec.seal(b"state")

    assert (first.ttl, first.audience, first.is_ephemeral) == (30, "Shop", True)
    assert first.codec.unseal(token) == b"state"
    with pytest.raises(InvalidRequestState, match="not in the ring"):
        second.codec.unseal(token)
    assert not RequestStateSecurity(keys=[KEY]).is_ephemeral


def test_bind_principal_defaults_to_the_authenticated_caller_and_takes_none() -> None:
    def tenant(ctx: ServerRequestContext[Any]) -> str | None:
        return "tenant-1"

    assert RequestStateSecurity(keys=[KEY]).bind_principal is authenticated_principal
    assert RequestStateSecurity(keys=[KEY], bind_principal=tenant).bind_principal is tenant
    assert RequestStateSecurity(keys=[KEY], bind_principal=None).bind_principal is None
    assert RequestStateSecurity.ephemeral().bind_principal is authenticated_principal


def unnamed_refusal(server: Any, policy: Any) -> str:
    with pytest.raises(ValueError, match=r"^request_state_security is configured") as refused:
        server(request_state_security=policy(keys=[KEY]))
    return str(refused.value)


def test_an_unnamed_server_given_a_policy_must_set_an_audience() -> None:
    refused = unnamed_refusal(MCPServer, RequestStateSecurity)

    assert refused == unnamed_refusal(SdkServer, SdkPolicy)
    assert refused.startswith("request_state_security is configured but this server has no name.")
    assert refused.endswith(
        'server (MCPServer("my-service", ...)) or set RequestStateSecurity(audience=...).'
    )


def test_an_unnamed_server_with_an_audience_or_no_policy_starts() -> None:
    assert MCPServer(request_state_security=RequestStateSecurity(keys=[KEY], audience="Shop")).request_state
    assert MCPServer().request_state.is_ephemeral
    assert (
        MCPServer(request_state=RequestStateSecurity(keys=[KEY], audience="Shop")).request_state.audience
        == "Shop"
    )


# In memory: `call_tool(..., principal=...)` runs every round through the policy's bind_principal.

ALICE = AccessToken(token="a", client_id="team-1", scopes=[], subject="alice")


class Approval(BaseModel):
    ok: bool


def ask() -> Elicit[Approval]:
    return Elicit("Approve the refund?", Approval)


def refunds(bind_principal: Any) -> MCPServer:
    mcp = MCPServer(
        "Refunds", request_state_security=RequestStateSecurity(keys=[KEY], bind_principal=bind_principal)
    )

    @mcp.tool()
    def refund(order: str, approval: Annotated[Approval, Resolve(ask)]) -> str:
        return f"{order} refunded: {approval.ok}"

    return mcp


ACCEPT = {ask: {"action": "accept", "content": {"ok": True}}}


async def test_a_custom_bind_principal_sees_each_rounds_context_in_memory() -> None:
    seen: list[tuple[str, str | None]] = []

    def team(ctx: ServerRequestContext[Any]) -> str | None:
        seen.append((ctx.method, ctx.protocol_version))
        return "team-1"

    result = await refunds(team).call_tool("refund", {"order": "A1"}, answers=ACCEPT, principal=ALICE)

    assert text(result) == "A1 refunded: True"
    assert seen == [("tools/call", "2026-07-28"), ("tools/call", "2026-07-28")]


@pytest.mark.parametrize("principal", [ALICE, None], ids=["authenticated", "anonymous"])
async def test_an_unbound_policy_and_the_default_both_finish_in_memory(principal: AccessToken | None) -> None:
    for binding in (None, authenticated_principal):
        result = await refunds(binding).call_tool(
            "refund", {"order": "A1"}, answers=ACCEPT, principal=principal
        )
        assert text(result) == "A1 refunded: True"


def raises(ctx: ServerRequestContext[Any]) -> str | None:
    raise RuntimeError("directory down")


def returns_bytes(ctx: ServerRequestContext[Any]) -> Any:
    return b"team-1"


@pytest.mark.parametrize("binding", [raises, returns_bytes])
async def test_a_failing_bind_principal_fails_closed_before_sealing(
    binding: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(MCPError) as refused:
        await refunds(binding).call_tool("refund", {"order": "A1"}, answers=ACCEPT, principal=ALICE)

    assert (refused.value.code, refused.value.message) == (-32603, "Internal error")
    assert "refusing to seal requestState: bind_principal" in caplog.text


# Over HTTP with the official client: Alice starts a refund, Bob (same team, other user) sends
# the answer with Alice's requestState.


async def alice_then_bob(url: str, flavour: Flavour) -> Any:
    async def never(context: Any, params: Any) -> Any:
        raise AssertionError("the rounds are answered by hand")

    def as_user(token: str) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"})

    async with (
        as_user("alice") as alice_http,
        Client(
            streamable_http_client(url, http_client=alice_http), mode="2026-07-28", elicitation_callback=never
        ) as alice,
    ):
        first = await alice.session.call_tool("refund", {"order": "A1"}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), flavour
    assert first.input_requests is not None
    assert first.request_state is not None
    (key, _), *_ = first.input_requests.items()
    answer = types.ElicitResult(action="accept", content={"ok": True})
    async with (
        as_user("bob") as bob_http,
        Client(
            streamable_http_client(url, http_client=bob_http), mode="2026-07-28", elicitation_callback=never
        ) as bob,
    ):
        return await outcome(
            bob.session.call_tool(
                "refund", {"order": "A1"}, input_responses={key: answer}, request_state=first.request_state
            )
        )


@pytest.mark.parametrize("binding", ["by_team", "by_user", "refuses_bob"])
async def test_bind_principal_decides_who_may_finish_a_round_over_http(binding: str) -> None:
    seen: dict[Flavour, Any] = {}
    for flavour in FLAVOURS:
        server = load("state_policy", flavour)
        async with serve(server.build(getattr(server, binding)).streamable_http_app()) as url:
            seen[flavour] = await alice_then_bob(url, flavour)

    assert seen["mcpdi"] == seen["sdk"]
    if binding == "by_team":
        assert seen["mcpdi"]["content"][0]["text"] == "A1 refunded: True (finished by bob)"
    else:  # separated, or a binding that raises while the round is opened: refused alike
        assert seen["mcpdi"] == {"error": -32602, "message": "Invalid or expired requestState"}
