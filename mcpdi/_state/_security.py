"""Sealed `requestState`: a versioned, authenticated, expiring token bound to one call."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from mcpdi._state._codec import (
    COMPRESS_ABOVE,
    MAX_PAYLOAD_SIZE,
    MIN_KEY_BYTES,
    HmacCodec,
    InvalidRequestState,
    StateCodec,
    StateTooLarge,
    UnsealingCodec,
    b64url_decode,
    b64url_encode,
    compact_json,
    opener_of,
    pack_payload,
    unpack_payload,
)
from mcpdi._state._replay import MemoryReplayStore, ReplayStore
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import INTERNAL_ERROR, MCPError

__all__ = (
    "COMPRESS_ABOVE",
    "MAX_PAYLOAD_SIZE",
    "MAX_TOKEN_SIZE",
    "MIN_KEY_BYTES",
    "BindPrincipal",
    "CallBinding",
    "HmacCodec",
    "InvalidRequestState",
    "MemoryReplayStore",
    "ReplayStore",
    "RequestStateSecurity",
    "StateCodec",
    "arguments_digest",
    "authenticated_principal",
    "b64url_decode",
    "b64url_encode",
    "compact_json",
    "pack_payload",
    "unpack_payload",
)

logger = logging.getLogger("mcpdi")

MAX_TOKEN_SIZE: Final = 1 << 20
"""Longest token `RequestStateSecurity.open` looks at, in characters (1 MiB)."""
_CLAIMS_VERSION: Final = 1

BindPrincipal = Callable[[ServerRequestContext[Any]], "str | None"]
"""Who a request's `requestState` is bound to, from its context; None leaves it unbound."""


def authenticated_principal(ctx: ServerRequestContext[Any]) -> str | None:
    """The default principal binding: the request's `principal`, as its context was given it (the
    one an in-memory call names, else the verified bearer token's); None when anonymous."""
    return None if ctx.principal is None else principal_identity(ctx.principal)


def principal_identity(principal: object) -> str:
    """A transport's principal as one unambiguous string (a pair is canonical JSON, as `principal_of`)."""
    if isinstance(principal, str):
        return principal
    return json.dumps(principal, ensure_ascii=False, separators=(",", ":"), default=str)


def arguments_digest(arguments: Mapping[str, Any] | None) -> str:
    """A short digest of a call's raw arguments (sorted-key compact JSON); None is the same as {}.

    Raises TypeError when an argument is not a JSON value.
    """
    try:
        text = json.dumps(arguments or {}, separators=(",", ":"), sort_keys=True, ensure_ascii=True)
    except TypeError as exc:
        msg = f"tool arguments must be JSON values to bind a requestState to them: {exc}"
        raise TypeError(msg) from exc
    return b64url_encode(hashlib.sha256(text.encode("ascii")).digest()[:16])


@dataclass(frozen=True, slots=True)
class CallBinding:
    """What a token is bound to: the call that received it must be the call it was sealed for.

    `target` is the tool or prompt name or the resource URI; `audience` names the server;
    `principal` identifies the authenticated caller (None when there is none).
    """

    method: str
    target: str
    arguments_digest: str
    audience: str
    principal: str | None = None

    @classmethod
    def of(
        cls,
        method: str,
        target: str,
        arguments: Mapping[str, Any] | None,
        *,
        audience: str,
        principal: str | None = None,
    ) -> CallBinding:
        return cls(method, target, arguments_digest(arguments), audience, principal)


def _principal_tag(principal: str) -> str:
    digest = hashlib.sha256(b"mcpdi/request-state/principal\x00" + principal.encode("utf-8", "surrogatepass"))
    return b64url_encode(digest.digest()[:16])


def _timestamp(seconds: float) -> int | float:
    rounded = round(seconds, 3)
    return int(rounded) if rounded.is_integer() else rounded


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


@dataclass(frozen=True, slots=True)
class _Claims:
    issued_at: float
    expires_at: float
    method: str
    target: str
    arguments: str
    audience: str
    principal: str | None
    state_id: str
    inner: dict[str, Any]

    @classmethod
    def parse(cls, value: Any) -> _Claims:
        if not isinstance(value, dict):
            msg = f"claims are {type(value).__name__}, not an object"
            raise InvalidRequestState(msg)
        claims = cast("dict[str, Any]", value)
        if claims.get("v") != _CLAIMS_VERSION:
            msg = f"claims version is {claims.get('v')!r}, not {_CLAIMS_VERSION}"
            raise InvalidRequestState(msg)
        for name in ("iat", "exp"):
            stamp = claims.get(name)
            if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not math.isfinite(stamp):
                msg = f"claim {name!r} is missing or not a number"
                raise InvalidRequestState(msg)
        for name in ("m", "t", "a", "aud", "j"):
            if not isinstance(claims.get(name), str):
                msg = f"claim {name!r} is missing or not a string"
                raise InvalidRequestState(msg)
        principal = claims.get("p")
        if principal is not None and not isinstance(principal, str):
            msg = "claim 'p' is not a string"
            raise InvalidRequestState(msg)
        inner = claims.get("s")
        if not isinstance(inner, dict):
            msg = "claim 's' is missing or not an object"
            raise InvalidRequestState(msg)
        return cls(
            float(claims["iat"]),
            float(claims["exp"]),
            claims["m"],
            claims["t"],
            claims["a"],
            claims["aud"],
            principal,
            claims["j"],
            cast("dict[str, Any]", inner),
        )


class RequestStateSecurity:
    """Seals inner state into a `requestState` token and opens it again for the same call.

    Exactly one of `keys` or `codec`, as in the official SDK; `RequestStateSecurity.ephemeral()`
    is a policy under a random key of its own.

    keys: a ring of secrets (bytes, or str used as UTF-8, each at least 32 bytes); the first
        seals, all verify, so rotate by putting the new key first. Share them between workers.
    ttl: seconds a token stays valid; each round re-seals, so it bounds think time per round.
    audience: replaces `CallBinding.audience` on both sides, e.g. one name for a service deployed
        under several server names.
    codec: a `StateCodec` instead of keys (AEAD, KMS); one written for the official SDK
        (`seal`/`unseal`) works too. The policy's `codec` attribute is the one in use.
    bind_principal: who a token is bound to, from the request's `ServerRequestContext`
        (`authenticated_principal` by default); a token sealed for one principal is refused
        for any other, and one sealed for None (or by `bind_principal=None`) is bound to nobody.
        If it raises or returns anything but a str or None, the round fails closed.
    clock: seconds since the epoch; max_skew: how far `iat` may lie in the future.
    max_token_size: longer tokens are refused before any decoding.
    single_use: each token is accepted once (`redeem`), so a confirmed round cannot be sent
        again to repeat its side effects. Turning it off lets a client (or anyone who saw a
        token) replay a round until the token expires.
    replay_store: where used token ids are kept (a `ReplayStore`; by default a
        `MemoryReplayStore` of this process). Several processes need one shared store.
    """

    __slots__ = (
        "_clock",
        "_open",
        "_seal",
        "audience",
        "bind_principal",
        "codec",
        "is_ephemeral",
        "max_skew",
        "max_token_size",
        "replay_store",
        "ttl",
    )

    def __init__(
        self,
        keys: Sequence[bytes | str] | None = None,
        *,
        ttl: float = 600.0,
        audience: str | None = None,
        codec: StateCodec | UnsealingCodec | None = None,
        clock: Callable[[], float] = time.time,
        max_skew: float = 60.0,
        max_token_size: int = MAX_TOKEN_SIZE,
        single_use: bool = True,
        replay_store: ReplayStore | None = None,
        bind_principal: BindPrincipal | None = authenticated_principal,
    ) -> None:
        if not single_use and replay_store is not None:
            msg = "RequestStateSecurity got a replay_store with single_use=False; drop one of them"
            raise ValueError(msg)
        if (keys is None) == (codec is None):
            # The official SDK's words; `ephemeral()` is the policy without a shared key.
            msg = "RequestStateSecurity takes exactly one of keys= or codec="
            raise ValueError(msg)
        if not (math.isfinite(ttl) and ttl > 0):
            msg = f"request-state ttl must be a positive finite number, got {ttl!r}"
            raise ValueError(msg)
        if not (math.isfinite(max_skew) and max_skew >= 0):
            msg = f"RequestStateSecurity max_skew must be zero or more seconds, not {max_skew!r}"
            raise ValueError(msg)
        self.is_ephemeral = False
        sealer = codec if codec is not None else HmacCodec(cast("Sequence[bytes | str]", keys))
        self.codec: StateCodec | UnsealingCodec = sealer
        self.bind_principal = bind_principal
        self._open = opener_of(sealer)
        self._seal = sealer.seal
        self.ttl = float(ttl)
        self.audience = audience
        self._clock = clock
        self.max_skew = float(max_skew)
        self.max_token_size = max_token_size
        self.replay_store: ReplayStore | None = None
        if single_use:
            self.replay_store = replay_store if replay_store is not None else MemoryReplayStore(clock=clock)

    @classmethod
    def ephemeral(
        cls,
        *,
        ttl: float = 600.0,
        audience: str | None = None,
        single_use: bool = True,
        bind_principal: BindPrincipal | None = authenticated_principal,
    ) -> RequestStateSecurity:
        """A policy under a random key of its own (what `MCPServer` uses when given none).

        Tokens die with the policy: no other server accepts them, and several processes serving
        one name need shared `keys`.
        """
        policy = cls(
            [secrets.token_bytes(MIN_KEY_BYTES)],
            ttl=ttl,
            audience=audience,
            single_use=single_use,
            bind_principal=bind_principal,
        )
        policy.is_ephemeral = True
        return policy

    def seal(self, binding: CallBinding, inner: Mapping[str, Any]) -> str:
        """A token carrying `inner` (JSON values only) for the call `binding` describes.

        Raises `StateTooLarge` when the claims exceed `MAX_PAYLOAD_SIZE` bytes of JSON.
        """
        now = self._clock()
        claims: dict[str, Any] = {
            "v": _CLAIMS_VERSION,
            "iat": _timestamp(now),
            "exp": _timestamp(now + self.ttl),
            "m": binding.method,
            "t": binding.target,
            "a": binding.arguments_digest,
            "aud": self.audience if self.audience is not None else binding.audience,
            "j": b64url_encode(secrets.token_bytes(16)),
        }
        if binding.principal is not None:
            claims["p"] = _principal_tag(binding.principal)
        claims["s"] = dict(inner)
        try:
            payload = pack_payload(claims)
        except StateTooLarge:
            raise
        except (TypeError, ValueError) as exc:
            # Python 3.13 appends the offending value (": nan"); the first clause is the reason.
            msg = f"requestState inner state must hold JSON values only: {str(exc).partition(': ')[0]}"
            raise type(exc)(msg) from exc
        token = cast("object", self._seal(payload))  # a plug-in: checked, not trusted
        if not isinstance(token, str):
            msg = f"the requestState codec returned {type(token).__name__} from seal, not str"
            raise TypeError(msg)
        return token

    def open(self, token: object, binding: CallBinding) -> dict[str, Any]:
        """The inner state of a token sealed by `seal` for this same call, still in time.

        Raises `InvalidRequestState` for anything else, including a non-string `token`. Only
        checks: `redeem` is what a server calls, to also use the token up.
        """
        return self._verified(token, binding).inner

    async def aclose(self) -> None:
        """Release what the replay store holds open (a Redis store's connections); the server
        calls it when its lifespan ends. A store used again afterwards reconnects."""
        closer = getattr(self.replay_store, "aclose", None)
        if closer is not None:
            await closer()

    async def redeem(self, token: object, binding: CallBinding) -> dict[str, Any]:
        """`open`, and with `single_use` claim the token's id, so a second redeem refuses it."""
        claims = self._verified(token, binding)
        if self.replay_store is None:
            return claims.inner
        try:
            fresh = await self.replay_store.claim(claims.state_id, self._expiry(claims))
        except ConnectionError:
            # A shared store that cannot be reached: the token is not spent, so the same round
            # succeeds once the store is back. The store logs the outage itself.
            msg = "The requestState replay store is unreachable; send the same request again shortly"
            raise MCPError(INTERNAL_ERROR, msg, {"reason": "replay_store_unavailable"}) from None
        except Exception as exc:
            logger.exception("requestState replay store raised; refusing the token")
            msg = f"replay store raised {type(exc).__name__}"
            raise InvalidRequestState(msg) from None
        if not fresh:
            msg = "token was already used (each requestState is accepted once)"
            raise InvalidRequestState(msg)
        return claims.inner

    def _expiry(self, claims: _Claims) -> float:
        # Our own ttl caps older, longer-lived tokens after a policy change.
        return min(claims.expires_at, claims.issued_at + self.ttl)

    def _verified(self, token: object, binding: CallBinding) -> _Claims:
        if not isinstance(token, str):
            msg = f"token is {type(token).__name__}, not a string"
            raise InvalidRequestState(msg)
        if not token:
            msg = "token is empty"
            raise InvalidRequestState(msg)
        if len(token) > self.max_token_size:
            msg = f"token is {len(token)} characters, over the limit of {self.max_token_size}"
            raise InvalidRequestState(msg)
        claims = _Claims.parse(unpack_payload(self._opened(token)))
        self._check_time(claims)
        self._check_binding(claims, binding)
        return claims

    def _opened(self, token: str) -> bytes:
        # Fail closed: whatever goes wrong in a codec (a KMS outage, a bug, a foreign
        # exception type) refuses the token; the peer learns nothing more than for a forgery.
        try:
            plaintext = cast("object", self._open(token))  # a plug-in: checked, not trusted
        except InvalidRequestState:
            raise
        except Exception as exc:
            logger.exception("requestState codec raised while opening a token; refusing it")
            msg = f"codec raised {type(exc).__name__}"
            raise InvalidRequestState(msg) from None
        if not isinstance(plaintext, bytes | bytearray):
            msg = f"codec returned {type(plaintext).__name__}, not bytes"
            raise InvalidRequestState(msg)
        return bytes(plaintext)

    def _check_time(self, claims: _Claims) -> None:
        now = self._clock()
        if claims.issued_at > now + self.max_skew:
            msg = (
                f"token was issued {claims.issued_at - now:.1f} s in the future "
                f"(more than the allowed skew of {self.max_skew:g} s)"
            )
            raise InvalidRequestState(msg)
        expires_at = self._expiry(claims)
        if now >= expires_at:
            msg = f"token expired {now - expires_at:.1f} s ago"
            raise InvalidRequestState(msg)

    def _check_binding(self, claims: _Claims, binding: CallBinding) -> None:
        audience = self.audience if self.audience is not None else binding.audience
        if claims.method != binding.method:
            msg = f"token was sealed for method {_shown(claims.method)}, not {_shown(binding.method)}"
        elif claims.target != binding.target:
            msg = f"token was sealed for {_shown(claims.target)}, not {_shown(binding.target)}"
        elif claims.arguments != binding.arguments_digest:
            msg = "token was sealed for other arguments"
        elif claims.audience != audience:
            msg = f"token was sealed for audience {_shown(claims.audience)}, not {_shown(audience)}"
        elif claims.principal is None and binding.principal is not None:
            msg = "token was sealed for an anonymous caller, not an authenticated one"
        elif claims.principal is not None and binding.principal is None:
            msg = "token was sealed for an authenticated caller, not an anonymous one"
        elif binding.principal is not None and claims.principal != _principal_tag(binding.principal):
            msg = "token was sealed for another principal"
        else:
            return
        raise InvalidRequestState(msg)
