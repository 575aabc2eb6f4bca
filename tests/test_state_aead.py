"""The AES-GCM codec: opaque tokens, key rotation, and every tampering refused."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples
from inline_snapshot import snapshot

from mcpdi import AesGcmCodec, InvalidRequestState, RequestStateSecurity
from mcpdi._state._codec import b64url_decode, b64url_encode
from mcpdi._state._security import CallBinding

KEY = b"k" * 32
OLD_KEY = "an old key that is long enough to be used"
NEW_KEY = b"n" * 48
NOW = 1_800_000_000.0
CALL = CallBinding.of("tools/call", "ship", {"item": "book"}, audience="Bookshop")
SECRET = {"answer": {"name": "Ada Lovelace", "card": "4111 1111 1111 1111"}}


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def policy(keys: list[bytes | str] | None = None, **options: Any) -> RequestStateSecurity:
    options.setdefault("clock", Clock())
    return RequestStateSecurity(codec=AesGcmCodec([KEY] if keys is None else keys), **options)


def reason_for(codec: AesGcmCodec, token: str) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        codec.open(token)
    return caught.value.reason


def test_a_state_round_trips_and_its_content_cannot_be_read_from_the_token() -> None:
    sealer = policy()
    token = sealer.seal(CALL, SECRET)

    assert token.startswith("a1.")
    assert sealer.open(token, CALL) == SECRET
    raw = b64url_decode(token[3:])
    for visible in (b"Ada", b"4111", b"tools/call", b"Bookshop", b"ship"):
        assert visible not in raw


def test_two_seals_of_the_same_bytes_differ() -> None:
    codec = AesGcmCodec([KEY])

    assert codec.seal(b"same") != codec.seal(b"same")
    assert codec.unseal(codec.seal(b"same")) == b"same"


@settings(max_examples=examples(10), deadline=None)
@given(st.binary(max_size=64), st.integers(1, 255))
def test_every_single_byte_flip_of_a_token_is_refused(plaintext: bytes, mask: int) -> None:
    codec = AesGcmCodec([KEY])
    token = codec.seal(plaintext)

    for position in range(len(token)):
        flipped = token[:position] + chr(ord(token[position]) ^ mask) + token[position + 1 :]
        with pytest.raises(InvalidRequestState):
            codec.open(flipped)


def test_every_truncation_of_a_token_is_refused() -> None:
    codec = AesGcmCodec([KEY])
    token = codec.seal(b'{"s":{}}')

    for length in range(len(token)):
        with pytest.raises(InvalidRequestState):
            codec.open(token[:length])


def test_malformed_tokens_are_refused_with_what_is_wrong() -> None:
    codec = AesGcmCodec([KEY])
    token = codec.seal(b"x")
    raw = b64url_decode(token[3:])
    cases = {
        "hmac prefix": "v1." + token[3:],
        "not base64url": "a1.***",
        "too short": "a1." + b64url_encode(b"\x00" * 31),
        "unknown key": "a1." + b64url_encode(b"\x00" * 40),
        "bad tag": "a1." + b64url_encode(raw[:-1] + bytes([raw[-1] ^ 1])),
    }

    assert {name: reason_for(codec, value) for name, value in cases.items()} == snapshot(
        {
            "hmac prefix": "token does not start with 'a1.'",
            "not base64url": "token body is not unpadded base64url",
            "too short": "token body is 31 bytes, too short for a key id, a nonce and a tag",
            "unknown key": "token was sealed with a key that is not in the ring (key id 00000000)",
            "bad tag": "token does not decrypt (key id f963a1aa)",
        }
    )


def test_a_token_from_another_key_is_refused() -> None:
    token = AesGcmCodec([NEW_KEY]).seal(b"x")

    assert reason_for(AesGcmCodec([KEY]), token) == snapshot(
        "token was sealed with a key that is not in the ring (key id 7aafb909)"
    )


def test_a_rotated_ring_seals_with_the_new_key_and_still_opens_old_tokens() -> None:
    old, rotated = AesGcmCodec([OLD_KEY]), AesGcmCodec([NEW_KEY, OLD_KEY])
    old_token = old.seal(b"round 1")

    new_token = rotated.seal(b"round 2")

    assert rotated.open(old_token) == b"round 1"
    assert AesGcmCodec([NEW_KEY]).open(new_token) == b"round 2"
    assert "not in the ring" in reason_for(old, new_token)


def test_an_expired_token_and_another_call_are_refused_by_the_policy() -> None:
    clock = Clock()
    sealer = policy(clock=clock, ttl=30)
    token = sealer.seal(CALL, {})
    other = CallBinding.of("tools/call", "refund", {"item": "book"}, audience="Bookshop")

    with pytest.raises(InvalidRequestState, match="sealed for 'ship', not 'refund'"):
        sealer.open(token, other)
    clock.now += 30
    with pytest.raises(InvalidRequestState, match="expired"):
        sealer.open(token, CALL)


def test_bad_keys_are_explained() -> None:
    messages: list[str] = []
    attempts: list[Any] = [[b"short"], [KEY, 5], [], KEY]
    for keys in attempts:
        with pytest.raises((TypeError, ValueError)) as caught:
            AesGcmCodec(keys)
        messages.append(f"{type(caught.value).__name__}: {caught.value}")

    assert messages == snapshot(
        [
            "ValueError: requestState key #1 is 5 bytes; use at least 32 random bytes, e.g. secrets.token_urlsafe(32)",
            "TypeError: requestState key #2 is int; pass bytes or str (str keys are used as UTF-8)",
            "ValueError: AesGcmCodec needs at least one key; the first one seals",
            "TypeError: AesGcmCodec takes a sequence of keys; wrap a single key in a list: AesGcmCodec([key])",
        ]
    )


def test_without_cryptography_the_import_error_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    monkeypatch.delitem(sys.modules, "mcpdi._state._aead")

    with pytest.raises(ImportError) as caught:
        importlib.import_module("mcpdi._state._aead")

    assert str(caught.value) == snapshot(
        "AesGcmCodec needs the cryptography package; install it with: pip install 'mcpdi[crypto]'"
    )


def test_the_server_loads_cryptography_only_when_the_aes_codec_is_used() -> None:
    code = (
        "import sys\n"
        "from mcpdi import MCPServer, RequestStateSecurity\n"
        "MCPServer('x', request_state=RequestStateSecurity([b'k' * 32]))\n"
        "before = 'cryptography' in sys.modules\n"
        "from mcpdi import AesGcmCodec\n"
        "print(before, 'cryptography' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.split() == ["False", "True"]
