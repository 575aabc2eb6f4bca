"""A resource server protected by bearer tokens, written against the SDK."""

from __future__ import annotations

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

TOKENS = {
    "good": AccessToken(token="good", client_id="app-1", scopes=["books:read"]),
    "narrow": AccessToken(token="narrow", client_id="app-2", scopes=["other"]),
}


class StaticVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return TOKENS.get(token)


def build() -> MCPServer:
    mcp = MCPServer(
        "Protected",
        token_verifier=StaticVerifier(),
        auth=AuthSettings(
            issuer_url="https://auth.example.com",  # type: ignore[arg-type]
            resource_server_url="http://127.0.0.1/mcp",  # type: ignore[arg-type]
            required_scopes=["books:read"],
            validate_token_resource=False,
        ),
    )

    @mcp.tool()
    def whoami() -> str:
        token = get_access_token()
        return "nobody" if token is None else f"{token.client_id} {sorted(token.scopes)}"

    return mcp
