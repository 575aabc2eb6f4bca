"""Byte-level sealing of request state: strict base64url, compact JSON payloads and the HMAC key ring."""

from __future__ import annotations

import base64
import hmac
import json
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, cast

__all__ = (
    "COMPRESS_ABOVE",
    "MAX_PAYLOAD_SIZE",
    "MIN_KEY_BYTES",
    "HmacCodec",
    "InvalidRequestState",
    "StateCodec",
    "StateTooLarge",
    "UnsealingCodec",
    "b64url_decode",
    "b64url_encode",
    "compact_json",
    "opener_of",
    "pack_payload",
    "ring_secrets",
    "unpack_payload",
)

MIN_KEY_BYTES: Final = 32
MAX_PAYLOAD_SIZE: Final = 1 << 20
"""Largest payload `pack_payload` seals and `unpack_payload` inflates (1 MiB), so a round costs
at most about what a client could send uncompressed: compression saves bandwidth, never
multiplies the server's work."""
COMPRESS_ABOVE: Final = 1024
"""Payloads longer than this are zlib-compressed when that makes them smaller."""

_FORMAT_JSON: Final = 0x01
_FORMAT_ZLIB_JSON: Final = 0x02
_HMAC_PREFIX: Final = "v1."
_KID_BYTES: Final = 4
_MAC_BYTES: Final = 32
_B64URL: Final = re.compile(r"[A-Za-z0-9_-]*")


class InvalidRequestState(Exception):
    """A `requestState` that cannot be trusted. `reason` is for server logs, never for the peer."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"invalid requestState: {reason}")


class StateTooLarge(ValueError):
    """The state to seal is larger than `MAX_PAYLOAD_SIZE`: the server's own limit, not the peer's fault."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"requestState payload is {size} bytes, over the limit of {limit}")


class StateCodec(Protocol):
    """Turns bytes into a token only the server can have made, and back.

    `open` raises `InvalidRequestState` for any token it did not seal (or cannot trust). Any
    other exception (a KMS being down) also refuses the token: the server fails closed and
    logs it. Both methods are synchronous: cache key material instead of calling out per token.
    A codec written for the official SDK, with `unseal` instead of `open`, is accepted too.
    """

    def seal(self, plaintext: bytes, /) -> str: ...

    def open(self, token: str, /) -> bytes: ...


class UnsealingCodec(Protocol):
    """The official SDK's spelling of `StateCodec` (`seal` / `unseal`)."""

    def seal(self, plaintext: bytes, /) -> str: ...

    def unseal(self, token: str, /) -> bytes: ...


def opener_of(codec: StateCodec | UnsealingCodec) -> Callable[[str], bytes]:
    """The codec's `open`, or its `unseal`; a TypeError naming what is missing otherwise."""
    opener = getattr(codec, "open", None) or getattr(codec, "unseal", None)
    if not callable(getattr(codec, "seal", None)) or not callable(opener):
        msg = (
            f"a requestState codec needs seal(bytes) -> str and open(str) -> bytes (or unseal); "
            f"{type(codec).__qualname__} does not have both"
        )
        raise TypeError(msg)
    return cast("Callable[[str], bytes]", opener)


def token_body(token: str, prefix: str) -> bytes:
    """The bytes after a codec's `prefix`; `InvalidRequestState` when the prefix or the base64url is wrong."""
    if not token.startswith(prefix):
        msg = f"token does not start with {prefix!r}"
        raise InvalidRequestState(msg)
    try:
        return b64url_decode(token[len(prefix) :])
    except ValueError as exc:
        msg = f"token body is {exc}"
        raise InvalidRequestState(msg) from None


def b64url_encode(data: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict inverse of `b64url_encode`: raises ValueError for padding, foreign characters, or
    a last character with stray low bits (so each byte string has exactly one encoding)."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        msg = "not unpadded base64url"
        raise ValueError(msg)
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        msg = "not canonical base64url (stray bits in the last character)"
        raise ValueError(msg)
    return data


def compact_json(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact UTF-8 JSON; lone surrogates survive (`surrogatepass`), NaN and infinities do not."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, sort_keys=sort_keys)
    return text.encode("utf-8", "surrogatepass")


def pack_payload(value: Any, *, max_size: int = MAX_PAYLOAD_SIZE) -> bytes:
    """Compact JSON behind a format byte: 0x01 plain, 0x02 zlib (used above `COMPRESS_ABOVE` bytes
    when it saves space). Raises `StateTooLarge` above `max_size` bytes of JSON."""
    data = compact_json(value)
    if len(data) > max_size:
        raise StateTooLarge(len(data), max_size)
    if len(data) > COMPRESS_ABOVE:
        squeezed = zlib.compress(data, 6)
        if len(squeezed) < len(data):
            return bytes((_FORMAT_ZLIB_JSON,)) + squeezed
    return bytes((_FORMAT_JSON,)) + data


def _reject_constant(name: str) -> Any:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def unpack_payload(data: bytes, *, max_size: int = MAX_PAYLOAD_SIZE) -> Any:
    """Inverse of `pack_payload`; raises `InvalidRequestState` for anything it did not produce."""
    if not data:
        msg = "payload is empty"
        raise InvalidRequestState(msg)
    fmt, body = data[0], data[1:]
    if fmt == _FORMAT_ZLIB_JSON:
        inflater = zlib.decompressobj()
        try:
            body = inflater.decompress(body, max_size + 1)
        except zlib.error as exc:
            msg = f"payload does not decompress ({exc})"
            raise InvalidRequestState(msg) from None
        if len(body) > max_size or inflater.unconsumed_tail:
            msg = f"payload decompresses to more than {max_size} bytes"
            raise InvalidRequestState(msg)
        if not inflater.eof or inflater.unused_data:
            msg = "payload is not exactly one zlib stream"
            raise InvalidRequestState(msg)
    elif fmt != _FORMAT_JSON:
        msg = f"payload format 0x{fmt:02x} is unknown"
        raise InvalidRequestState(msg)
    elif len(body) > max_size:
        msg = f"payload is larger than {max_size} bytes"
        raise InvalidRequestState(msg)
    try:
        return json.loads(body.decode("utf-8", "surrogatepass"), parse_constant=_reject_constant)
    except ValueError as exc:  # also UnicodeDecodeError and JSONDecodeError
        msg = f"payload is not JSON ({exc})"
        raise InvalidRequestState(msg) from None


def ring_secrets(codec: str, keys: Sequence[bytes | str]) -> tuple[bytes, ...]:
    """A key ring as bytes, first key first; refused with advice unless it holds long secrets."""
    if isinstance(keys, str | bytes):
        msg = f"{codec} takes a sequence of keys; wrap a single key in a list: {codec}([key])"
        raise TypeError(msg)
    if not keys:
        msg = f"{codec} needs at least one key; the first one seals"
        raise ValueError(msg)
    return tuple(_key_bytes(position, key) for position, key in enumerate(keys, start=1))


def _key_bytes(position: int, key: object) -> bytes:
    """A ring key as bytes (str keys are UTF-8), refused with advice when it is not a long secret."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes | bytearray):
        msg = (
            f"requestState key #{position} is {type(key).__name__}; pass bytes or str "
            "(str keys are used as UTF-8)"
        )
        raise TypeError(msg)
    if len(key) < MIN_KEY_BYTES:
        msg = (
            f"requestState key #{position} is {len(key)} bytes; use at least {MIN_KEY_BYTES} random "
            "bytes, e.g. secrets.token_urlsafe(32)"
        )
        raise ValueError(msg)
    return bytes(key)


class HmacCodec:
    """HMAC-SHA256 over a key ring: the first key seals, every key verifies.

    Token: `"v1." + base64url_nopad(kid[4] || plaintext || mac[32])`, where per key
    `kid = HMAC(key, "mcpdi/request-state/v1/kid")[:4]` and the MAC is
    `HMAC(HMAC(key, "mcpdi/request-state/v1/mac"), "v1." || kid || plaintext)`. The plaintext
    is authenticated, not hidden: plug in an AEAD codec when the client must not read it.
    """

    __slots__ = ("_ring",)

    def __init__(self, keys: Sequence[bytes | str]) -> None:
        ring: list[tuple[bytes, bytes]] = []
        for secret in ring_secrets("HmacCodec", keys):
            kid = hmac.digest(secret, b"mcpdi/request-state/v1/kid", "sha256")[:_KID_BYTES]
            ring.append((kid, hmac.digest(secret, b"mcpdi/request-state/v1/mac", "sha256")))
        self._ring: tuple[tuple[bytes, bytes], ...] = tuple(ring)

    @staticmethod
    def _mac(mac_key: bytes, kid: bytes, plaintext: bytes) -> bytes:
        return hmac.digest(mac_key, _HMAC_PREFIX.encode("ascii") + kid + plaintext, "sha256")

    def seal(self, plaintext: bytes, /) -> str:
        kid, mac_key = self._ring[0]
        return _HMAC_PREFIX + b64url_encode(kid + plaintext + self._mac(mac_key, kid, plaintext))

    def open(self, token: str, /) -> bytes:
        raw = token_body(token, _HMAC_PREFIX)
        if len(raw) < _KID_BYTES + _MAC_BYTES:
            msg = f"token body is {len(raw)} bytes, too short for a key id and a MAC"
            raise InvalidRequestState(msg)
        kid, plaintext, tag = raw[:_KID_BYTES], raw[_KID_BYTES:-_MAC_BYTES], raw[-_MAC_BYTES:]
        candidates = [mac_key for ring_kid, mac_key in self._ring if ring_kid == kid]
        if not candidates:
            msg = f"token was sealed with a key that is not in the ring (key id {kid.hex()})"
            raise InvalidRequestState(msg)
        for mac_key in candidates:
            if hmac.compare_digest(self._mac(mac_key, kid, plaintext), tag):
                return plaintext
        msg = f"token MAC does not verify (key id {kid.hex()})"
        raise InvalidRequestState(msg)

    unseal = open  # the official SDK's name, so this codec also plugs into it
