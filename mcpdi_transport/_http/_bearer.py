"""Bearer-token checks in front of the MCP endpoint, and the Protected Resource Metadata (RFC 9728)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi import AccessToken, AuthSettings, TokenVerifier, authenticated
from mcpdi_transport._http._common import header_values, json_reply
from mcpdi_transport._http._security import SecurityPolicy

__all__ = ("METADATA_PATH", "BearerGate", "MetadataEndpoint", "metadata_paths")

METADATA_PATH = "/.well-known/oauth-protected-resource"

logger = logging.getLogger("mcpdi_transport")


_HOST: Final = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
"""A `Host` header that may name this server in a URL: a DNS name or an IP literal, and a port."""


def metadata_paths(settings: AuthSettings, mcp_path: str) -> tuple[str, ...]:
    """Where the metadata is served: the well-known path, and with the resource's path appended.

    The resource's path is that of `resource_server_url`, else the MCP path: the URL the
    challenge names is always one of these.
    """
    path = urlsplit(settings.resource_server_url).path if settings.resource_server_url else mcp_path
    path = path.rstrip("/")
    return (METADATA_PATH, f"{METADATA_PATH}{path}") if path else (METADATA_PATH,)


def _origin(settings: AuthSettings, scope: Scope) -> str | None:
    """`scheme://host` of this server: from `resource_server_url`, else from a well-formed `Host`.

    The `Host` has passed the app's allow-list by then (when the Host check is on); one that
    could not be part of a URL gives None (the request is refused, never reflected).
    """
    if settings.resource_server_url:
        parts = urlsplit(settings.resource_server_url)
        return f"{parts.scheme}://{parts.netloc}"
    host = header_values(scope).get("host", "")
    if not _HOST.fullmatch(host):
        return None
    return f"{scope.get('scheme', 'http')}://{host}"


def _resource_url(settings: AuthSettings, origin: str, mcp_path: str) -> str:
    return settings.resource_server_url or origin + mcp_path


def _metadata_url(settings: AuthSettings, origin: str, mcp_path: str) -> str:
    path = urlsplit(settings.resource_server_url).path if settings.resource_server_url else mcp_path
    return f"{origin}{METADATA_PATH}{path.rstrip('/')}"


async def _bad_host(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("Invalid Host header", status_code=400)(scope, receive, send)


class MetadataEndpoint:
    """The JSON document telling clients which authorization server issues tokens for this server.

    The request's Host and Origin are checked first, as at the MCP endpoint (421/403).
    """

    def __init__(self, settings: AuthSettings, mcp_path: str, policy: SecurityPolicy) -> None:
        self.settings = settings
        self.mcp_path = mcp_path
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        rejection = self.policy.check("GET", header_values(scope))
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        settings = self.settings
        origin = _origin(settings, scope)
        if origin is None:
            await _bad_host(scope, receive, send)
            return
        document: dict[str, Any] = {
            "resource": _resource_url(settings, origin, self.mcp_path),
            "authorization_servers": [str(settings.issuer_url)],
            "bearer_methods_supported": ["header"],
        }
        if settings.required_scopes:
            document["scopes_supported"] = list(settings.required_scopes)
        if settings.service_documentation_url:
            document["resource_documentation"] = settings.service_documentation_url
        await JSONResponse(document)(scope, receive, send)


def _quoted(value: str) -> str:
    """An RFC 9110 quoted-string: backslash and double quote escaped, controls dropped."""
    kept = "".join(c for c in value if c == "\t" or " " <= c <= "~" or c >= "\x80")
    return '"' + kept.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _challenge(metadata_url: str, error: str | None, description: str | None, scopes: list[str]) -> str:
    parts = [f"resource_metadata={_quoted(metadata_url)}"]
    if error is not None:
        parts.insert(0, f"error={_quoted(error)}")
    if description is not None:
        parts.insert(1, f"error_description={_quoted(description)}")
    if scopes:
        parts.append(f"scope={_quoted(' '.join(scopes))}")
    return "Bearer " + ", ".join(parts)


class BearerGate:
    """Lets a request through to `app` only with a valid token holding the required scopes.

    The request's Host and Origin are checked first (`policy`: 421/403), so a foreign Host
    never reaches the challenge. No token: 401 with a `WWW-Authenticate` challenge naming
    the metadata URL; a token the verifier rejects or that has expired: 401 `invalid_token`;
    missing scopes: 403 `insufficient_scope`. Refusals come before the body is read (put
    the body limit inside the gate), and close a connection whose body was not read. A
    passing request runs with the token as the current one.
    """

    def __init__(
        self,
        app: ASGIApp,
        verifier: TokenVerifier,
        settings: AuthSettings,
        mcp_path: str,
        policy: SecurityPolicy,
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.settings = settings
        self.mcp_path = mcp_path
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = header_values(scope)
        rejection = self.policy.check(scope["method"], headers)
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
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
        origin = _origin(self.settings, scope)
        if origin is None:
            await _bad_host(scope, receive, send)
            return
        metadata_url = _metadata_url(self.settings, origin, self.mcp_path)
        headers = {"WWW-Authenticate": _challenge(metadata_url, error, description, scopes)}
        sent = header_values(scope)
        if sent.get("content-length", "0") != "0" or "transfer-encoding" in sent:
            headers["Connection"] = "close"  # the body is left unread: the connection cannot be reused
        body = {"error": error or "invalid_request", "error_description": description}
        await json_reply(scope, receive, send, body, status=status, headers=headers)
