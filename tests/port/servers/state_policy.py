"""A server whose requestState is bound to a principal the author derives, written against the SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Elicit, MCPServer, RequestStateSecurity, Resolve
from pydantic import BaseModel

KEY = b"a shared request-state key, 32+ bytes"

# Alice and Bob are two users of one team's client.
TOKENS = {
    "alice": AccessToken(token="alice", client_id="team-1", scopes=[], subject="alice"),
    "bob": AccessToken(token="bob", client_id="team-1", scopes=[], subject="bob"),
}


class StaticVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return TOKENS.get(token)


def by_team(ctx: Any) -> str | None:
    """Anyone of the team may finish a teammate's approval."""
    token = get_access_token()
    return None if token is None else token.client_id


def by_user(ctx: Any) -> str | None:
    token = get_access_token()
    return None if token is None else f"{token.client_id}/{token.subject}"


def refuses_bob(ctx: Any) -> str | None:
    """A directory lookup that fails for Bob: his rounds must be refused, not let through."""
    token = get_access_token()
    if token is not None and token.subject == "bob":
        raise LookupError("bob is not in the directory")
    return by_user(ctx)


class Approval(BaseModel):
    ok: bool


def ask() -> Elicit[Approval]:
    return Elicit("Approve the refund?", Approval)


def build(bind_principal: Callable[[Any], str | None]) -> MCPServer:
    mcp = MCPServer(
        "Refunds",
        token_verifier=StaticVerifier(),
        auth=AuthSettings(
            issuer_url="https://auth.example.com",  # type: ignore[arg-type]
            resource_server_url="http://127.0.0.1/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,
        ),
        request_state_security=RequestStateSecurity(keys=[KEY], bind_principal=bind_principal),
    )

    @mcp.tool()
    def refund(order: str, approval: Annotated[Approval, Resolve(ask)]) -> str:
        token = get_access_token()
        who = None if token is None else token.subject
        return f"{order} refunded: {approval.ok} (finished by {who})"

    return mcp
