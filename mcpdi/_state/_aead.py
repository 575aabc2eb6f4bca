"""AES-256-GCM sealing of request state (the `crypto` extra): tokens the client cannot read."""

from __future__ import annotations

import hmac
import os
from collections.abc import Sequence
from typing import Final

try:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
except ImportError as error:  # pragma: no cover - exercised with the package hidden
    msg = "AesGcmCodec needs the cryptography package; install it with: pip install 'mcpdi[crypto]'"
    raise ImportError(msg) from error

from mcpdi._state._codec import InvalidRequestState, b64url_encode, ring_secrets, token_body

__all__ = ("AesGcmCodec",)

_PREFIX: Final = "a1."
_KID_BYTES: Final = 4
_NONCE_BYTES: Final = 12
_TAG_BYTES: Final = 16
_KDF_INFO: Final = b"mcpdi/request-state/a1/aes-256-gcm"
_KID_INFO: Final = b"mcpdi/request-state/a1/kid"


class AesGcmCodec:
    """AES-256-GCM over a key ring: the first key seals, every key opens.

    Token: `"a1." + base64url_nopad(kid[4] || nonce[12] || ciphertext || tag[16])`. Each AES
    key is HKDF-SHA256 of a secret (at least 32 bytes); `kid = HMAC(secret, label)[:4]` names
    the key without revealing it; the prefix and kid are authenticated as associated data, so
    a token cannot move to another format or ring slot. Nonces are random (96 bits): rotate
    the key well before 2^32 tokens. The plaintext is hidden and authenticated.
    """

    __slots__ = ("_ring", "_sealing_kid")

    def __init__(self, keys: Sequence[bytes | str]) -> None:
        ring: dict[bytes, list[AESGCM]] = {}
        kids: list[bytes] = []
        for secret in ring_secrets("AesGcmCodec", keys):
            kid = hmac.digest(secret, _KID_INFO, "sha256")[:_KID_BYTES]
            derived = HKDF(algorithm=SHA256(), length=32, salt=None, info=_KDF_INFO).derive(secret)
            ring.setdefault(kid, []).append(AESGCM(derived))
            kids.append(kid)
        self._ring = ring
        self._sealing_kid = kids[0]

    def seal(self, plaintext: bytes) -> str:
        kid = self._sealing_kid
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._ring[kid][0].encrypt(nonce, plaintext, _PREFIX.encode("ascii") + kid)
        return _PREFIX + b64url_encode(kid + nonce + sealed)

    def open(self, token: str) -> bytes:
        raw = token_body(token, _PREFIX)
        if len(raw) < _KID_BYTES + _NONCE_BYTES + _TAG_BYTES:
            msg = f"token body is {len(raw)} bytes, too short for a key id, a nonce and a tag"
            raise InvalidRequestState(msg)
        kid, nonce, sealed = (
            raw[:_KID_BYTES],
            raw[_KID_BYTES : _KID_BYTES + _NONCE_BYTES],
            raw[_KID_BYTES + _NONCE_BYTES :],
        )
        candidates = self._ring.get(kid)
        if candidates is None:
            msg = f"token was sealed with a key that is not in the ring (key id {kid.hex()})"
            raise InvalidRequestState(msg)
        for aead in candidates:
            try:
                return aead.decrypt(nonce, sealed, _PREFIX.encode("ascii") + kid)
            except InvalidTag:
                continue
        msg = f"token does not decrypt (key id {kid.hex()})"
        raise InvalidRequestState(msg)

    unseal = open  # the official SDK's name, so this codec also plugs into it
