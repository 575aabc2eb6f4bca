"""A server's own `ServingOptions` as the transports read them, and the principal of a stdio server.

stdio has no request headers, so no bearer token per request: the client that launches the
process sets `MCPDI_ACCESS_TOKEN` in its environment instead, and the server's own verifier
checks it once at start. Every request then runs as that principal.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Final

from mcpdi import AccessToken, AuthSettings, TokenVerifier
from mcpdi.lowlevel import ServingOptions

__all__ = ("TOKEN_VARIABLE", "StdioAuthError", "serving_options_of", "stdio_principal", "verified_principal")

TOKEN_VARIABLE: Final = "MCPDI_ACCESS_TOKEN"

logger = logging.getLogger("mcpdi_transport")


class StdioAuthError(Exception):
    """A token given outside HTTP (`MCPDI_ACCESS_TOKEN`, `mcpdi call --token`) cannot be the principal."""


def serving_options_of(server: object) -> ServingOptions:
    """The server's `serving_options`; the defaults for an object that carries none."""
    options = getattr(server, "serving_options", None)
    return options if isinstance(options, ServingOptions) else ServingOptions()


def options_for_app(
    server: object,
    *,
    token_verifier: TokenVerifier | None,
    auth: AuthSettings | None,
    debug: bool | None,
) -> ServingOptions:
    """The server's own options with an entry point's keywords over them.

    The auth pair comes whole, from the entry point or from the server (never one half of
    each), so no keyword can switch the server's auth off.
    """
    own = serving_options_of(server)
    if token_verifier is None and auth is None:
        token_verifier, auth = own.token_verifier, own.auth
    if (token_verifier is None) != (auth is None):
        msg = "bearer auth needs both token_verifier= and auth=AuthSettings(...)"
        raise ValueError(msg)
    return ServingOptions(token_verifier, auth, own.routes, own.debug if debug is None else debug)


async def stdio_principal(server: object, environ: Mapping[str, str] = os.environ) -> AccessToken | None:
    """The access token every stdio request runs with: `MCPDI_ACCESS_TOKEN`, verified by the
    server's own `token_verifier` (`StdioAuthError` when refused); None without auth.

    A server with bearer auth and no token in the environment is served without a principal,
    and says so once: tools with `required_scopes` refuse, `get_access_token()` is None.
    """
    text = environ.get(TOKEN_VARIABLE, "").strip()
    if not text and serving_options_of(server).token_verifier is not None:
        logger.warning(
            "bearer auth guards HTTP requests only: over stdio every request runs without an access "
            "token (tools with required_scopes refuse); set %s to a token for the server's verifier",
            TOKEN_VARIABLE,
        )
    token = await verified_principal(server, text, f"the token in {TOKEN_VARIABLE}")
    if token is not None:
        logger.info("serving stdio as %s (from %s)", token.subject or token.client_id, TOKEN_VARIABLE)
    return token


async def verified_principal(server: object, text: str, source: str) -> AccessToken | None:
    """`text` as an access token, checked as the HTTP transport checks a bearer token: by the
    server's own verifier, its expiry, resource and required scopes; None when `text` is empty.

    `source` names where the token came from in the refusals (`StdioAuthError`).
    """
    options = serving_options_of(server)
    verifier, settings = options.token_verifier, options.auth
    if not text:
        return None
    if verifier is None or settings is None:
        msg = f"{source} cannot be checked: the server has no token_verifier="
        raise StdioAuthError(msg)
    token = await verifier.verify_token(text)
    if token is None:
        msg = f"the server's token verifier refuses {source}"
        raise StdioAuthError(msg)
    if token.expires_at is not None and token.expires_at < time.time():
        msg = f"{source} has expired"
        raise StdioAuthError(msg)
    if settings.validate_token_resource and token.resource != settings.resource_server_url:
        msg = f"{source} is for {token.resource!r}, not {settings.resource_server_url!r}"
        raise StdioAuthError(msg)
    lacking = [scope for scope in settings.required_scopes if scope not in token.scopes]
    if lacking:
        msg = f"{source} lacks the scopes every request needs: {', '.join(lacking)}"
        raise StdioAuthError(msg)
    return token
