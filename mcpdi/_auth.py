"""Bearer-token auth, the sans-IO half: what a verified token is, who verifies it, who is calling.

The HTTP transport checks `Authorization: Bearer ...` with your `TokenVerifier`, answers
401/403 itself, and runs the request with the verified `AccessToken` as the current one:
`get_access_token()` (or `ctx.access_token`) reads it in tools and resolvers, and the
token's client and subject become the principal `requestState` is sealed to.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from pydantic import BaseModel

INSUFFICIENT_SCOPE: Final = -32003
"""The error of a tool call whose token lacks the tool's `required_scopes` (implementation-defined)."""

__all__ = (
    "INSUFFICIENT_SCOPE",
    "AccessToken",
    "AuthSettings",
    "TokenVerifier",
    "authenticated",
    "get_access_token",
    "missing_scopes",
    "principal_of",
)


class AccessToken(BaseModel):
    """A verified bearer token: the client it was issued to and the scopes it grants."""

    token: str
    client_id: str
    scopes: list[str]
    expires_at: int | None = None  # seconds since the epoch
    resource: str | None = None  # the resource the token was issued for (RFC 8707)
    subject: str | None = None  # the resource owner (`sub`)
    claims: dict[str, Any] | None = None


class TokenVerifier(Protocol):
    """Checks a bearer token: its `AccessToken` when valid (signature, expiry, audience), else None."""

    async def verify_token(self, token: str) -> AccessToken | None: ...


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """Where tokens come from and what every request needs.

    `issuer_url`: the authorization server, published in the Protected Resource Metadata.
    `resource_server_url`: this server's URL (the MCP endpoint), the resource tokens are for.
    `required_scopes`: scopes every request needs (403 without them).
    `validate_token_resource`: refuse tokens whose `resource` is not `resource_server_url`
    (leave it off when your verifier checks the audience itself).
    """

    issuer_url: str
    resource_server_url: str | None = None
    required_scopes: Sequence[str] = field(default=())
    service_documentation_url: str | None = None
    validate_token_resource: bool | None = None

    def __post_init__(self) -> None:
        # The official SDK's settings take pydantic `AnyHttpUrl`s: kept as their text.
        for url_field in ("issuer_url", "resource_server_url", "service_documentation_url"):
            value: object = getattr(self, url_field)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, url_field, str(value))
        if not str(self.issuer_url).startswith(("https://", "http://")):
            msg = f"AuthSettings.issuer_url must be an http(s) URL, got {self.issuer_url!r}"
            raise ValueError(msg)
        if self.validate_token_resource and not self.resource_server_url:
            msg = "AuthSettings(validate_token_resource=True) needs resource_server_url= to compare with"
            raise ValueError(msg)


_CURRENT: ContextVar[AccessToken | None] = ContextVar("mcpdi_access_token", default=None)


def get_access_token() -> AccessToken | None:
    """The verified token of the request being answered; None without auth."""
    return _CURRENT.get()


@contextmanager
def authenticated(token: AccessToken) -> Generator[None]:
    """Run the request's handling with `token` as the current access token (for transports)."""
    reset = _CURRENT.set(token)
    try:
        yield
    finally:
        _CURRENT.reset(reset)


def missing_scopes(token: AccessToken | None, required: Sequence[str]) -> list[str]:
    """The scopes of `required` that `token` lacks (all of them without a token)."""
    granted: set[str] = set(token.scopes) if token is not None else set()
    return [scope for scope in required if scope not in granted]


def principal_of(token: AccessToken | None) -> str | None:
    """Who is calling, one string per (client, subject) pair: what `requestState` and sessions
    are bound to. None without a token.

    The pair is written as canonical JSON (`["app","alice"]`, `["app",null]`), so no client id
    can pass for another client and subject: `"app|alice"` alone is `["app|alice",null]`.
    """
    if token is None:
        return None
    return json.dumps([token.client_id, token.subject], ensure_ascii=False, separators=(",", ":"))
