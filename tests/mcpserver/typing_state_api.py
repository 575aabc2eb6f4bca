"""Type-checked, never run: the state plug-in points as a user's code sees them."""

from __future__ import annotations

from typing import assert_type

from mcpdi import (
    AesGcmCodec,
    HmacCodec,
    MCPServer,
    MemoryReplayStore,
    ReplayStore,
    RequestStateSecurity,
    ResourceSecurity,
    StateCodec,
)

hmac_codec: StateCodec = HmacCodec([b"k" * 32])
aes_codec: StateCodec = AesGcmCodec([b"k" * 32, "an older key of at least 32 bytes!!"])
store: ReplayStore = MemoryReplayStore(max_entries=10)


class SdkStyleCodec:
    def seal(self, plaintext: bytes) -> str:
        return plaintext.hex()

    def unseal(self, token: str) -> bytes:
        return bytes.fromhex(token)


security = RequestStateSecurity(codec=SdkStyleCodec(), replay_store=store, ttl=60)
assert_type(RequestStateSecurity.ephemeral(ttl=30), RequestStateSecurity)
assert_type(security.replay_store, ReplayStore | None)
mcp = MCPServer(
    "Typed", request_state_security=security, resource_security=ResourceSecurity(exempt_params={"path"})
)
assert_type(hmac_codec.seal(b"x"), str)
assert_type(aes_codec.open("a1.x"), bytes)
