"""A ready `TokenVerifier` for JWT access tokens, checked against a JWKS from a file or a URL.

Needs `pyjwt` with its crypto extra (`pip install 'mcpdi[jwt]'`). The signature, `exp`/`nbf`,
`iss` and `aud` are checked; any failure makes the token unknown (None), which the HTTP app
answers with 401 and a `WWW-Authenticate` challenge.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from mcpdi import AccessToken

__all__ = ("JwtVerifier",)

logger = logging.getLogger("mcpdi_transport")

_ALGORITHMS: tuple[str, ...] = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA")


class JwtVerifier:
    """Verifies JWT bearer tokens issued by `issuer` for `audience`.

    Keys come from `jwks_file` (a JWKS document on disk, read once) or `jwks_url` (fetched
    on first use and again for an unknown `kid`, in a worker thread; `cache_seconds` keeps a
    fetched set). The token's client is its `client_id` (else `azp`, else `sub`) and its
    scopes are `scope` (space-separated) or `scp` (a list).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_file: str | Path | None = None,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = _ALGORITHMS,
        leeway: float = 30.0,
        cache_seconds: float = 300.0,
    ) -> None:
        import jwt  # the jwt extra; imported here so that mcpdi_transport loads without it

        if (jwks_file is None) == (jwks_url is None):
            msg = "JwtVerifier needs exactly one of jwks_file= and jwks_url="
            raise ValueError(msg)
        self.issuer = issuer
        self.audience = audience if isinstance(audience, str) else list(audience)
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self._jwt: Any = jwt
        self._keys: dict[str, Any] = {}
        self._client: Any = None
        if jwks_file is not None:
            try:
                document = json.loads(Path(jwks_file).read_text(encoding="utf-8"))
                key_set = jwt.PyJWKSet.from_dict(document)
            except (OSError, ValueError, jwt.PyJWTError) as error:
                msg = f"cannot read the JWKS file {jwks_file}: {error}"
                raise ValueError(msg) from None
            self._keys = {key.key_id or "": key for key in key_set.keys}
        else:
            self._client = jwt.PyJWKClient(str(jwks_url), cache_jwk_set=True, lifespan=int(cache_seconds))

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's `AccessToken`, or None; why a token is refused is logged at info."""
        try:
            claims = await self._claims(token)
        except _Refused as refused:
            logger.info("refused a bearer token (%s): %s", refused.reason, refused.detail)
            return None
        return _access_token(token, claims)

    async def _claims(self, token: str) -> dict[str, Any]:
        jwt = self._jwt
        try:
            header: dict[str, Any] = jwt.get_unverified_header(token)
            algorithm = header.get("alg")
            key = await self._signing_key(token, header.get("kid"))
            if algorithm not in self.algorithms or algorithm not in _algorithms_of(key):
                detail = f"algorithm {algorithm!r} is not allowed for a {key.key_type} key"
                raise _Refused("algorithm", detail)
            return jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except _Refused:
            raise
        except Exception as error:  # a verifier error never escapes: the token is refused
            raise _Refused(_reason_of(jwt, error), str(error) or type(error).__name__) from None

    async def _signing_key(self, token: str, kid: object) -> Any:
        if self._client is None:
            if kid is None and len(self._keys) == 1:
                return next(iter(self._keys.values()))
            key = self._keys.get(kid if isinstance(kid, str) else "")
            if key is None:
                raise _Refused("key id", f"no key with id {kid!r} in the JWKS")
            return key
        return await anyio.to_thread.run_sync(self._client.get_signing_key_from_jwt, token)


class _Refused(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


_FAMILIES: dict[str, tuple[str, ...]] = {
    "RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    "EC": ("ES256", "ES384", "ES512", "ES256K"),
    "OKP": ("EdDSA",),
}


def _algorithms_of(key: Any) -> tuple[str, ...]:
    """What a key may verify: the `alg` its JWK names, else every algorithm of its type."""
    named = getattr(key, "_jwk_data", {}).get("alg")  # PyJWK fills `algorithm_name` in when absent
    return (named,) if isinstance(named, str) else _FAMILIES.get(key.key_type, ())


def _reason_of(jwt: Any, error: Exception) -> str:
    """The word a log line gives for why a token was refused."""
    reasons: tuple[tuple[type[Exception], str], ...] = (
        (jwt.ExpiredSignatureError, "expiry"),
        (jwt.ImmatureSignatureError, "not yet valid"),
        (jwt.InvalidAudienceError, "audience"),
        (jwt.InvalidIssuerError, "issuer"),
        (jwt.MissingRequiredClaimError, "missing claim"),
        (jwt.InvalidSignatureError, "signature"),
        (jwt.PyJWKClientError, "key id"),
        (jwt.DecodeError, "malformed"),
    )
    for kind, reason in reasons:
        if isinstance(error, kind):
            return reason
    return "unusable"


def _access_token(token: str, claims: dict[str, Any]) -> AccessToken | None:
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = scope.split()
    else:
        listed: Any = claims.get("scp", [])
        scopes = [str(item) for item in listed] if isinstance(listed, list) else []  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    client = claims.get("client_id") or claims.get("azp") or claims.get("sub")
    if not isinstance(client, str):
        logger.info("refused a bearer token: it names no client (client_id, azp or sub)")
        return None
    audience = claims.get("aud")
    return AccessToken(
        token=token,
        client_id=client,
        scopes=scopes,
        expires_at=int(claims["exp"]),
        resource=audience if isinstance(audience, str) else None,
        subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
        claims=claims,
    )
