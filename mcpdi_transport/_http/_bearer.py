"""Bearer-token checks in front of the MCP endpoint, and the Protected Resource Metadata (RFC 9728)."""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi import AccessToken, AuthSettings, TokenVerifier, authenticated
from mcpdi_transport._http._common import header_values, json_reply

__all__ = ("METADATA_PATH", "BearerGate", "metadata_endpoint", "metadata_paths")

METADATA_PATH = "/.well-known/oauth-protected-resource"

logger = logging.getLogger("mcpdi_transport")


def metadata_paths(settings: AuthSettings) -> tuple[str, ...]:
    """Where the metadata is served: the well-known path, and with the resource's path appended."""
    path = urlsplit(settings.resource_server_url or "").path.rstrip("/")
    return (METADATA_PATH, f"{METADATA_PATH}{path}") if path else (METADATA_PATH,)


def _metadata_url(settings: AuthSettings, scope: Scope, mcp_path: str) -> str:
    if settings.resource_server_url:
        parts = urlsplit(settings.resource_server_url)
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"
    host = header_values(scope).get("host", "localhost")
    return f"{scope.get('scheme', 'http')}://{host}{METADATA_PATH}{mcp_path.rstrip('/')}"


def metadata_endpoint(settings: AuthSettings, mcp_path: str) -> Any:
    """The JSON document telling clients which authorization server issues tokens for this server."""

    async def metadata(request: Request) -> JSONResponse:
        resource = settings.resource_server_url or str(request.base_url).rstrip("/") + mcp_path
        document: dict[str, Any] = {
            "resource": resource,
            "authorization_servers": [str(settings.issuer_url)],
            "bearer_methods_supported": ["header"],
        }
        if settings.required_scopes:
            document["scopes_supported"] = list(settings.required_scopes)
        if settings.service_documentation_url:
            document["resource_documentation"] = settings.service_documentation_url
        return JSONResponse(document)

    return metadata


def _challenge(metadata_url: str, error: str | None, description: str | None, scopes: list[str]) -> str:
    parts = [f'resource_metadata="{metadata_url}"']
    if error is not None:
        parts.insert(0, f'error="{error}"')
    if description is not None:
        parts.insert(1, f'error_description="{description}"')
    if scopes:
        parts.append(f'scope="{" ".join(scopes)}"')
    return "Bearer " + ", ".join(parts)


class BearerGate:
    """Lets a request through to `app` only with a valid token holding the required scopes.

    No token: 401 with a `WWW-Authenticate` challenge naming the metadata URL; a token the
    verifier rejects or that has expired: 401 `invalid_token`; missing scopes: 403
    `insufficient_scope`. A passing request runs with the token as the current one.
    """

    def __init__(self, app: ASGIApp, verifier: TokenVerifier, settings: AuthSettings, mcp_path: str) -> None:
        self.app = app
        self.verifier = verifier
        self.settings = settings
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = header_values(scope).get("authorization", "")
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            await self._refuse(scope, receive, send, 401, None, "Bearer token required", [])
            return
        try:
            token: AccessToken | None = await self.verifier.verify_token(credentials.strip())
        except Exception:  # a verifier's bug or outage refuses the token, never answers 500
            logger.exception("the token verifier raised; refusing the token")
            token = None
        settings = self.settings
        if (
            token is None
            or (token.expires_at is not None and token.expires_at < time.time())
            or (settings.validate_token_resource and token.resource != settings.resource_server_url)
        ):
            await self._refuse(scope, receive, send, 401, "invalid_token", "Invalid or expired token", [])
            return
        lacking = [scope for scope in self.settings.required_scopes if scope not in token.scopes]
        if lacking:
            await self._refuse(scope, receive, send, 403, "insufficient_scope", "Missing scopes", lacking)
            return
        with authenticated(token):
            await self.app(scope, receive, send)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        error: str | None,
        description: str,
        scopes: list[str],
    ) -> None:
        challenge = _challenge(_metadata_url(self.settings, scope, self.mcp_path), error, description, scopes)
        body = {"error": error or "invalid_request", "error_description": description}
        await json_reply(scope, receive, send, body, status=status, headers={"WWW-Authenticate": challenge})
