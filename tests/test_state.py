"""Sealing requestState: round trips, tampering, expiry, binding, key rotation, limits."""

from __future__ import annotations

import base64
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples
from inline_snapshot import snapshot

from mcpdi._state._security import (
    CallBinding,
    HmacCodec,
    InvalidRequestState,
    RequestStateSecurity,
    arguments_digest,
    b64url_decode,
    b64url_encode,
    compact_json,
    pack_payload,
    unpack_payload,
)

KEY = b"k" * 32
OLD_KEY = "an old key that is long enough to be used"
NEW_KEY = b"n" * 48
NOW = 1_800_000_000.0

CALL = CallBinding.of("tools/call", "ship", {"item": "book", "count": 2}, audience="Bookshop")


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def security(keys: list[bytes | str] | None = None, **options: Any) -> RequestStateSecurity:
    options.setdefault("clock", Clock())
    return RequestStateSecurity([KEY] if keys is None else keys, **options)


def reason_for(policy: RequestStateSecurity, token: object, binding: CallBinding = CALL) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        policy.open(token, binding)
    return caught.value.reason


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
inner_states = st.dictionaries(st.text(max_size=12), json_values, max_size=6)


# --- round trips --------------------------------------------------------------------------------


@given(inner_states)
def test_any_inner_state_round_trips(inner: dict[str, Any]) -> None:
    policy = security()

    assert policy.open(policy.seal(CALL, inner), CALL) == inner


def test_lone_surrogates_round_trip() -> None:
    policy = security()
    inner = {"answer": "\ud800 and \udfff"}

    assert policy.open(policy.seal(CALL, inner), CALL) == inner


def test_a_small_state_makes_a_short_token_with_the_version_prefix() -> None:
    token = security().seal(CALL, {"v": 3, "asked": {"r1a2b3c4d": "AbCdEfGhIjKlMnOpQrStUv"}})

    assert token.startswith("v1.")
    assert len(token) < 350  # claims, a random state id and the MAC


def test_a_large_state_is_compressed() -> None:
    inner = {"outcomes": {f"r{i}": {"action": "accept", "data": {"name": "Ada Lovelace"}} for i in range(50)}}
    policy = security()

    token = policy.seal(CALL, inner)

    assert len(token) < len(compact_json(inner))
    assert policy.open(token, CALL) == inner


# --- tampering ----------------------------------------------------------------------------------


@settings(max_examples=examples(25), deadline=None)
@given(inner_states, st.integers(1, 255))
def test_every_single_byte_flip_of_a_token_is_rejected(inner: dict[str, Any], mask: int) -> None:
    policy = security()
    token = policy.seal(CALL, inner)

    for position in range(len(token)):
        flipped = token[:position] + chr(ord(token[position]) ^ mask) + token[position + 1 :]
        with pytest.raises(InvalidRequestState):
            policy.open(flipped, CALL)


def test_every_single_bit_flip_of_a_fixed_token_is_rejected() -> None:
    policy = security()
    token = policy.seal(CALL, {"v": 3, "asked": {"r1a2b3c4d": "AbCdEfGhIjKlMnOpQrStUv"}})

    for position in range(len(token)):
        for bit in range(8):
            flipped = token[:position] + chr(ord(token[position]) ^ (1 << bit)) + token[position + 1 :]
            with pytest.raises(InvalidRequestState):
                policy.open(flipped, CALL)


def test_changing_the_claims_without_the_key_breaks_the_mac() -> None:
    policy = security()
    raw = b64url_decode(policy.seal(CALL, {"ship": False})[3:])
    forged = raw.replace(b'"ship":false', b'"ship":true ')
    assert forged != raw

    assert reason_for(policy, "v1." + b64url_encode(forged)) == snapshot(
        "token MAC does not verify (key id 7c65d96a)"
    )


@given(st.text(max_size=300))
def test_arbitrary_strings_are_rejected_with_a_reason(token: str) -> None:
    with pytest.raises(InvalidRequestState) as caught:
        security().open(token, CALL)
    assert caught.value.reason


@given(st.binary(max_size=200))
def test_arbitrary_bodies_after_the_prefix_are_rejected(body: bytes) -> None:
    with pytest.raises(InvalidRequestState):
        security().open("v1." + b64url_encode(body), CALL)


def test_malformed_tokens_are_rejected_with_what_is_wrong() -> None:
    policy = security(max_token_size=4096)
    token = policy.seal(CALL, {})
    body = token[3:]
    forty_zero_bytes = b64url_encode(b"\x00" * 40)
    assert forty_zero_bytes.endswith("A")  # 2 meaningful bits and 4 stray ones
    cases: dict[str, object] = {
        "empty": "",
        "not a string": 42,
        "oversized": "v1." + "A" * 4096,
        "other version": "v2." + body,
        "garbage": "hello",
        "padded": token + "=" * (-len(body) % 4 or 4),
        "standard alphabet": "v1." + body.replace("-", "+").replace("_", "/") + "+/",
        "impossible length": "v1." + body[: (len(body) // 4 - 1) * 4] + "A",
        "stray bits": "v1." + forty_zero_bytes[:-1] + "B",
        "too short": "v1." + b64url_encode(b"\x00" * 35),
        "unknown key": "v1." + b64url_encode(b"\x00" * 40),
    }

    reasons = {name: reason_for(policy, value) for name, value in cases.items()}

    assert reasons == snapshot(
        {
            "empty": "token is empty",
            "not a string": "token is int, not a string",
            "oversized": "token is 4099 characters, over the limit of 4096",
            "other version": "token does not start with 'v1.'",
            "garbage": "token does not start with 'v1.'",
            "padded": "token body is not unpadded base64url",
            "standard alphabet": "token body is not unpadded base64url",
            "impossible length": "token body is not unpadded base64url",
            "stray bits": "token body is not canonical base64url (stray bits in the last character)",
            "too short": "token body is 35 bytes, too short for a key id and a MAC",
            "unknown key": "token was sealed with a key that is not in the ring (key id 00000000)",
        }
    )


def test_tokens_over_one_mebibyte_are_refused_before_decoding() -> None:
    assert reason_for(security(), "v1." + "A" * (1 << 20)) == snapshot(
        "token is 1048579 characters, over the limit of 1048576"
    )


# --- expiry -------------------------------------------------------------------------------------


def test_a_token_expires_after_the_ttl() -> None:
    clock = Clock()
    policy = security(clock=clock, ttl=30)
    token = policy.seal(CALL, {"a": 1})

    clock.now = NOW + 29.999
    assert policy.open(token, CALL) == {"a": 1}
    clock.now = NOW + 30
    assert reason_for(policy, token) == snapshot("token expired 0.0 s ago")
    clock.now = NOW + 3600
    assert reason_for(policy, token) == snapshot("token expired 3570.0 s ago")


def test_the_default_ttl_is_ten_minutes() -> None:
    clock = Clock()
    policy = RequestStateSecurity([KEY], clock=clock)
    token = policy.seal(CALL, {})

    clock.now = NOW + 599
    assert policy.open(token, CALL) == {}
    clock.now = NOW + 600
    assert reason_for(policy, token) == snapshot("token expired 0.0 s ago")


def test_a_shorter_ttl_also_limits_tokens_sealed_under_a_longer_one() -> None:
    clock = Clock()
    token = security(clock=clock, ttl=600).seal(CALL, {})
    clock.now = NOW + 120

    assert reason_for(security(clock=clock, ttl=60), token) == snapshot("token expired 60.0 s ago")


def test_a_token_issued_too_far_in_the_future_is_rejected() -> None:
    future = security(clock=Clock(NOW + 90)).seal(CALL, {})
    near_future = security(clock=Clock(NOW + 30)).seal(CALL, {})
    policy = security(clock=Clock(NOW))

    assert policy.open(near_future, CALL) == {}
    assert reason_for(policy, future) == snapshot(
        "token was issued 90.0 s in the future (more than the allowed skew of 60 s)"
    )


# --- binding ------------------------------------------------------------------------------------


def test_a_token_only_opens_for_the_call_it_was_sealed_for() -> None:
    policy = security()
    token = policy.seal(CALL, {})
    signed_in = CallBinding.of(
        "tools/call", "ship", {"item": "book", "count": 2}, audience="Bookshop", principal="ada"
    )
    other_calls = {
        "method": CallBinding.of("prompts/get", "ship", {"item": "book", "count": 2}, audience="Bookshop"),
        "target": CallBinding.of("tools/call", "refund", {"item": "book", "count": 2}, audience="Bookshop"),
        "arguments": CallBinding.of("tools/call", "ship", {"item": "book", "count": 3}, audience="Bookshop"),
        "no arguments": CallBinding.of("tools/call", "ship", None, audience="Bookshop"),
        "audience": CallBinding.of("tools/call", "ship", {"item": "book", "count": 2}, audience="Other shop"),
        "now signed in": signed_in,
    }

    reasons = {name: reason_for(policy, token, binding) for name, binding in other_calls.items()}

    assert reasons == snapshot(
        {
            "method": "token was sealed for method 'tools/call', not 'prompts/get'",
            "target": "token was sealed for 'ship', not 'refund'",
            "arguments": "token was sealed for other arguments",
            "no arguments": "token was sealed for other arguments",
            "audience": "token was sealed for audience 'Bookshop', not 'Other shop'",
            "now signed in": "token was sealed for an anonymous caller, not an authenticated one",
        }
    )


def test_a_token_sealed_for_a_principal_opens_only_for_that_principal() -> None:
    policy = security()
    ada = CallBinding.of("tools/call", "ship", {}, audience="Bookshop", principal="ada")
    bob = CallBinding.of("tools/call", "ship", {}, audience="Bookshop", principal="bob")
    anonymous = CallBinding.of("tools/call", "ship", {}, audience="Bookshop")
    token = policy.seal(ada, {"x": 1})

    assert policy.open(token, ada) == {"x": 1}
    assert [reason_for(policy, token, bob), reason_for(policy, token, anonymous)] == snapshot(
        [
            "token was sealed for another principal",
            "token was sealed for an authenticated caller, not an anonymous one",
        ]
    )


def test_the_principal_is_not_readable_in_the_token() -> None:
    token = security().seal(
        CallBinding.of("tools/call", "ship", {}, audience="a", principal="ada@example.com"), {}
    )

    assert b"ada@example.com" not in b64url_decode(token[3:])


def test_a_policy_audience_replaces_the_binding_audience() -> None:
    sealer = security(audience="shop")
    token = sealer.seal(CALL, {})
    renamed = CallBinding(CALL.method, CALL.target, CALL.arguments_digest, "Bookshop v2")

    assert security(audience="shop").open(token, renamed) == {}
    assert reason_for(security(), token) == snapshot("token was sealed for audience 'shop', not 'Bookshop'")


def test_long_names_are_shortened_in_reasons() -> None:
    policy = security()
    token = policy.seal(CALL, {})
    long_target = CallBinding("tools/call", "x" * 500, CALL.arguments_digest, CALL.audience)

    assert reason_for(policy, token, long_target) == snapshot(
        "token was sealed for 'ship', not "
        "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
    )


# --- keys ---------------------------------------------------------------------------------------


def test_a_token_from_another_key_is_rejected() -> None:
    token = security([NEW_KEY]).seal(CALL, {})

    assert reason_for(security([KEY]), token) == snapshot(
        "token was sealed with a key that is not in the ring (key id 1faf5563)"
    )


def test_a_rotated_ring_seals_with_the_new_key_and_still_opens_old_tokens() -> None:
    old = security([OLD_KEY])
    rotated = security([NEW_KEY, OLD_KEY])
    old_token = old.seal(CALL, {"round": 1})

    new_token = rotated.seal(CALL, {"round": 2})

    assert rotated.open(old_token, CALL) == {"round": 1}
    assert security([NEW_KEY]).open(new_token, CALL) == {"round": 2}
    assert "not in the ring" in reason_for(old, new_token)


def test_a_str_key_is_its_utf8_bytes() -> None:
    token = security(["é" * 16]).seal(CALL, {})

    assert security(["é".encode() * 16]).open(token, CALL) == {}


def test_without_keys_each_policy_has_a_random_key_of_its_own() -> None:
    first = RequestStateSecurity.ephemeral()
    second = RequestStateSecurity.ephemeral()
    token = first.seal(CALL, {"a": 1})

    assert first.is_ephemeral
    assert not security().is_ephemeral
    assert first.open(token, CALL) == {"a": 1}
    assert "not in the ring" in reason_for(second, token)
    assert "not in the ring" in reason_for(security(), token)


def test_bad_keys_and_options_are_explained() -> None:
    messages: list[str] = []
    attempts: list[dict[str, Any]] = [
        {"keys": [b"short"]},
        {"keys": [KEY, "also short"]},
        {"keys": [KEY, 1234]},
        {"keys": []},
        {"keys": KEY},
        {"keys": [KEY], "codec": HmacCodec([KEY])},
        {"keys": [KEY], "ttl": 0},
        {"keys": [KEY], "max_skew": -1},
    ]
    for options in attempts:
        with pytest.raises((TypeError, ValueError)) as caught:
            RequestStateSecurity(**options)
        messages.append(f"{type(caught.value).__name__}: {caught.value}")

    assert messages == snapshot(
        [
            "ValueError: requestState key #1 is 5 bytes; use at least 32 random bytes, e.g. "
            "secrets.token_urlsafe(32)",
            "ValueError: requestState key #2 is 10 bytes; use at least 32 random bytes, e.g. "
            "secrets.token_urlsafe(32)",
            "TypeError: requestState key #2 is int; pass bytes or str (str keys are used as UTF-8)",
            "ValueError: HmacCodec needs at least one key; the first one seals",
            "TypeError: HmacCodec takes a sequence of keys; wrap a single key in a list: HmacCodec([key])",
            "ValueError: RequestStateSecurity takes exactly one of keys= or codec=",
            "ValueError: request-state ttl must be a positive finite number, got 0",
            "ValueError: RequestStateSecurity max_skew must be zero or more seconds, not -1",
        ]
    )


# --- codecs -------------------------------------------------------------------------------------


class ReversingCodec:
    """Not secure; shows that any object with seal/open can carry the state."""

    def __init__(self) -> None:
        self.sealed = 0

    def seal(self, plaintext: bytes) -> str:
        self.sealed += 1
        return "rev." + base64.b64encode(plaintext[::-1]).decode()

    def open(self, token: str) -> bytes:
        if not token.startswith("rev."):
            raise InvalidRequestState("not a reversed token")
        return base64.b64decode(token[4:])[::-1]


def test_a_plugged_in_codec_seals_and_opens_the_claims() -> None:
    codec = ReversingCodec()
    policy = RequestStateSecurity(codec=codec, clock=Clock())

    token = policy.seal(CALL, {"a": 1})

    assert codec.sealed == 1
    assert token.startswith("rev.")
    assert policy.open(token, CALL) == {"a": 1}
    assert not policy.is_ephemeral
    assert reason_for(policy, "v1.AAAA") == snapshot("not a reversed token")


def test_the_hmac_codec_round_trips_bytes_and_uses_the_first_key() -> None:
    codec = HmacCodec([KEY, NEW_KEY])

    token = codec.seal(b"payload")

    assert codec.open(token) == b"payload"
    assert HmacCodec([KEY]).open(token) == b"payload"
    with pytest.raises(InvalidRequestState):
        HmacCodec([NEW_KEY]).open(token)


def forge(claims: Any) -> str:
    """What only a key holder could make: well sealed, but not by RequestStateSecurity."""
    return HmacCodec([KEY]).seal(pack_payload(claims))


def test_well_sealed_but_malformed_claims_are_rejected() -> None:
    good: dict[str, Any] = {
        "v": 1,
        "iat": NOW,
        "exp": NOW + 60,
        "m": CALL.method,
        "t": CALL.target,
        "a": CALL.arguments_digest,
        "aud": CALL.audience,
        "j": "state-1",
        "s": {},
    }
    policy = security()
    assert policy.open(forge(good), CALL) == {}

    cases: dict[str, Any] = {
        "array": [good],
        "version": good | {"v": 2},
        "no expiry": {k: v for k, v in good.items() if k != "exp"},
        "boolean time": good | {"iat": True},
        "numeric target": good | {"t": 5},
        "numeric principal": good | {"p": 5},
        "no state id": {k: v for k, v in good.items() if k != "j"},
        "string inner state": good | {"s": "{}"},
    }
    reasons = {name: reason_for(policy, forge(claims)) for name, claims in cases.items()}
    reasons["not JSON"] = reason_for(policy, HmacCodec([KEY]).seal(b"\x01{nope"))
    reasons["no payload"] = reason_for(policy, HmacCodec([KEY]).seal(b""))
    reasons["unknown format"] = reason_for(policy, HmacCodec([KEY]).seal(b"\x07{}"))

    assert reasons == snapshot(
        {
            "array": "claims are list, not an object",
            "version": "claims version is 2, not 1",
            "no expiry": "claim 'exp' is missing or not a number",
            "boolean time": "claim 'iat' is missing or not a number",
            "numeric target": "claim 't' is missing or not a string",
            "numeric principal": "claim 'p' is not a string",
            "no state id": "claim 'j' is missing or not a string",
            "string inner state": "claim 's' is missing or not an object",
            "not JSON": (
                "payload is not JSON (Expecting property name enclosed in double quotes: "
                "line 1 column 2 (char 1))"
            ),
            "no payload": "payload is empty",
            "unknown format": "payload format 0x07 is unknown",
        }
    )


def test_inner_state_must_be_json() -> None:
    policy = security()
    with pytest.raises(TypeError) as not_json:
        policy.seal(CALL, {"when": object})
    with pytest.raises(ValueError, match="JSON") as nan:
        policy.seal(CALL, {"x": float("nan")})

    assert [str(not_json.value), str(nan.value)] == snapshot(
        [
            "requestState inner state must hold JSON values only: "
            "Object of type type is not JSON serializable",
            "requestState inner state must hold JSON values only: "
            "Out of range float values are not JSON compliant",
        ]
    )


# --- payload helpers ----------------------------------------------------------------------------


def test_small_payloads_are_plain_compact_json_behind_format_byte_1() -> None:
    assert pack_payload({"a": [1, 2], "b": "é"}) == b'\x01{"a":[1,2],"b":"\xc3\xa9"}'


def test_payloads_over_one_kibibyte_are_zlib_behind_format_byte_2_when_that_is_smaller() -> None:
    repetitive = {"text": "ab" * 1000}
    random_looking = {"text": b64url_encode(bytes(range(256)) * 3)[:1100]}

    assert pack_payload(repetitive)[0] == 2
    assert unpack_payload(pack_payload(repetitive)) == repetitive
    assert pack_payload(random_looking)[0] in (1, 2)
    assert unpack_payload(pack_payload(random_looking)) == random_looking


def test_unpacking_refuses_a_decompression_bomb_and_broken_streams() -> None:
    bomb = b"\x02" + zlib.compress(b"[" + b"0," * 100_000 + b"0]")
    reasons: list[str] = []
    for data in (
        bomb,
        b"\x02not zlib",
        b"\x02" + zlib.compress(b"{}") + b"tail",
        b"\x02" + zlib.compress(b"{}")[:-3],
    ):
        with pytest.raises(InvalidRequestState) as caught:
            unpack_payload(data, max_size=1000)
        reasons.append(caught.value.reason)

    assert reasons == snapshot(
        [
            "payload decompresses to more than 1000 bytes",
            "payload does not decompress (Error -3 while decompressing data: incorrect header check)",
            "payload is not exactly one zlib stream",
            "payload is not exactly one zlib stream",
        ]
    )
    with pytest.raises(InvalidRequestState, match="larger than 10 bytes"):
        unpack_payload(b"\x01" + b" " * 11, max_size=10)


def test_unpacking_refuses_nan_and_infinity() -> None:
    with pytest.raises(InvalidRequestState, match="NaN is not JSON"):
        unpack_payload(b'\x01{"x":NaN}')


@given(st.binary())
def test_strict_base64url_has_exactly_one_spelling_per_byte_string(data: bytes) -> None:
    text = b64url_encode(data)

    assert b64url_decode(text) == data
    assert "=" not in text


# --- arguments digest ---------------------------------------------------------------------------


def test_the_arguments_digest_ignores_key_order_and_treats_none_as_empty() -> None:
    assert arguments_digest({"a": 1, "b": [1, {"y": 2, "x": 1}]}) == arguments_digest(
        {"b": [1, {"x": 1, "y": 2}], "a": 1}
    )
    assert arguments_digest(None) == arguments_digest({})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": "1"})
    assert len(arguments_digest({})) == 22


def test_the_arguments_digest_accepts_any_parsed_json_including_surrogates_and_nan() -> None:
    assert arguments_digest({"s": "\ud800", "n": float("nan")}) != arguments_digest({})


def test_the_arguments_digest_names_non_json_arguments() -> None:
    with pytest.raises(TypeError) as caught:
        arguments_digest({"when": object()})

    assert str(caught.value) == snapshot(
        "tool arguments must be JSON values to bind a requestState to them: "
        "Object of type object is not JSON serializable"
    )
