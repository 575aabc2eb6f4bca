"""Standing fuzz of sealed state, for every built-in codec: nothing but the exact token for the
exact call, once and in time, is accepted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples
from pydantic import BaseModel

from mcpdi import (
    AesGcmCodec,
    Elicit,
    HmacCodec,
    InvalidRequestState,
    MCPServer,
    RequestStateSecurity,
    Resolve,
)
from mcpdi._state._codec import b64url_encode
from mcpdi._state._security import CallBinding
from mcpdi.testing import InMemoryClient

KEY = b"k" * 32
OTHER_KEY = b"o" * 32
NOW = 1_800_000_000.0
ARGUMENTS = {"item": "book", "count": 2}
CALL = CallBinding.of("tools/call", "ship", ARGUMENTS, audience="Bookshop")
CODECS: dict[str, Callable[[bytes], Any]] = {
    "hmac": lambda key: HmacCodec([key]),
    "aes-gcm": lambda key: AesGcmCodec([key]),
}
INNER = {"v": 1, "outcomes": {"r1": {"q": "d", "p": {"action": "accept", "content": {"ok": True}}}}}

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def policy(codec: str, key: bytes = KEY, **options: Any) -> RequestStateSecurity:
    options.setdefault("clock", Clock())
    return RequestStateSecurity(codec=CODECS[codec](key), **options)


def refused(security: RequestStateSecurity, token: object, binding: CallBinding = CALL) -> bool:
    try:
        security.open(token, binding)
    except InvalidRequestState:
        return True
    return False


@pytest.fixture(params=sorted(CODECS))
def codec(request: pytest.FixtureRequest) -> str:
    return request.param


def test_every_single_byte_flip_is_refused(codec: str) -> None:
    security = policy(codec)
    token = security.seal(CALL, INNER)
    assert not refused(security, token)

    accepted = [
        (position, mask)
        for position in range(len(token))
        for mask in (0x01, 0x02, 0x20, 0x7F)
        if not refused(security, token[:position] + chr(ord(token[position]) ^ mask) + token[position + 1 :])
    ]

    assert accepted == []


def test_every_truncation_and_every_extension_by_one_character_is_refused(codec: str) -> None:
    security = policy(codec)
    token = security.seal(CALL, INNER)

    assert [n for n in range(len(token)) if not refused(security, token[:n])] == []
    assert [c for c in "AQgw_-=." if not refused(security, token + c)] == []


def test_a_token_of_another_key_or_another_codec_is_refused(codec: str) -> None:
    security = policy(codec)
    other_codec = "hmac" if codec == "aes-gcm" else "aes-gcm"

    assert refused(security, policy(codec, OTHER_KEY).seal(CALL, INNER))
    assert refused(security, policy(other_codec).seal(CALL, INNER))


def test_an_expired_token_is_refused(codec: str) -> None:
    clock = Clock()
    security = policy(codec, clock=clock, ttl=10)
    token = security.seal(CALL, INNER)
    clock.now += 10

    assert refused(security, token)


@pytest.mark.anyio
async def test_a_token_is_redeemed_once(codec: str) -> None:
    security = policy(codec)
    token = security.seal(CALL, INNER)

    assert await security.redeem(token, CALL) == INNER
    with pytest.raises(InvalidRequestState, match="already used"):
        await security.redeem(token, CALL)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(["tools/call", "prompts/get", "resources/read"]),
    target=st.text(max_size=10),
    arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    audience=st.sampled_from(["Bookshop", "Other"]),
    principal=st.none() | st.text(max_size=5),
)
def test_a_token_opens_for_its_own_call_and_no_other(
    codec: str, method: str, target: str, arguments: dict[str, Any], audience: str, principal: str | None
) -> None:
    security = policy(codec)
    token = security.seal(CALL, INNER)
    other = CallBinding.of(method, target, arguments, audience=audience, principal=principal)
    same = (method, target, other.arguments_digest, audience, principal) == (
        CALL.method,
        CALL.target,
        CALL.arguments_digest,
        CALL.audience,
        None,
    )

    assert refused(security, token, other) is not same


@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.text(max_size=200)
    | st.tuples(st.sampled_from(["v1.", "a1."]), st.binary(max_size=150)).map(
        lambda parts: parts[0] + b64url_encode(parts[1])
    )
)
def test_arbitrary_text_is_refused(codec: str, text: str) -> None:
    assert refused(policy(codec), text)


class Confirm(BaseModel):
    ok: bool


def ask() -> Elicit[Confirm]:
    return Elicit("Ship it?", Confirm)


@pytest.mark.anyio
async def test_through_the_server_no_flipped_token_runs_the_tool(codec: str) -> None:
    ran: list[bool] = []
    mcp = MCPServer("Bookshop", request_state=RequestStateSecurity(codec=CODECS[codec](KEY)))

    @mcp.tool()
    def ship(item: str, count: int, confirm: Annotated[Confirm, Resolve(ask)]) -> str:
        ran.append(confirm.ok)
        return "shipped"

    async with mcp.running() as runner:
        client = InMemoryClient(runner)
        first = (await client.send("tools/call", {"name": "ship", "arguments": ARGUMENTS}))["result"]
        (key,) = first["inputRequests"]
        token: str = first["requestState"]
        codes: set[int] = set()
        with anyio.fail_after(60):
            for position in range(len(token)):
                flipped = token[:position] + chr(ord(token[position]) ^ 0x01) + token[position + 1 :]
                response = await client.send(
                    "tools/call",
                    {
                        "name": "ship",
                        "arguments": ARGUMENTS,
                        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
                        "requestState": flipped,
                    },
                )
                codes.add(response["error"]["code"])

    assert codes == {-32602}
    assert ran == []
