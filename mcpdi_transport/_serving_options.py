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

from mcpdi import AccessToken
from mcpdi.lowlevel import ServingOptions

__all__ = ("TOKEN_VARIABLE", "StdioAuthError", "serving_options_of", "stdio_principal")

TOKEN_VARIABLE: Final = "MCPDI_ACCESS_TOKEN"

logger = logging.getLogger("mcpdi_transport")


class StdioAuthError(Exception):
    """The token in `MCPDI_ACCESS_TOKEN` cannot serve as the stdio server's principal."""


def serving_options_of(server: object) -> ServingOptions:
    """The server's `serving_options`; the defaults for an object that carries none."""
    options = getattr(server, "serving_options", None)
    return options if isinstance(options, ServingOptions) else ServingOptions()


async def stdio_principal(server: object, environ: Mapping[str, str] = os.environ) -> AccessToken | None:
    """The access token every stdio request runs with: `MCPDI_ACCESS_TOKEN`, verified by the
    server's own `token_verifier` (`StdioAuthError` when refused); None without auth.

    A server with bearer auth and no token in the environment is served without a principal,
    and says so once: tools with `required_scopes` refuse, `get_access_token()` is None.
    """
    options = serving_options_of(server)
    text = environ.get(TOKEN_VARIABLE, "").strip()
    verifier, settings = options.token_verifier, options.auth
    if verifier is None or settings is None:
        if text:
            msg = f"{TOKEN_VARIABLE} is set, but the server has no token_verifier= to check it with"
            raise StdioAuthError(msg)
        return None
    if not text:
        logger.warning(
            "bearer auth guards HTTP requests only: over stdio every request runs without an access "
            "token (tools with required_scopes refuse); set %s to a token for the server's verifier",
            TOKEN_VARIABLE,
        )
        return None
    token = await verifier.verify_token(text)
    if token is None:
        msg = f"the server's token verifier refuses the token in {TOKEN_VARIABLE}"
        raise StdioAuthError(msg)
    if token.expires_at is not None and token.expires_at < time.time():
        msg = f"the token in {TOKEN_VARIABLE} has expired"
        raise StdioAuthError(msg)
    if settings.validate_token_resource and token.resource != settings.resource_server_url:
        msg = f"the token in {TOKEN_VARIABLE} is for {token.resource!r}, not {settings.resource_server_url!r}"
        raise StdioAuthError(msg)
    lacking = [scope for scope in settings.required_scopes if scope not in token.scopes]
    if lacking:
        msg = f"the token in {TOKEN_VARIABLE} lacks the scopes every request needs: {', '.join(lacking)}"
        raise StdioAuthError(msg)
    logger.info("serving stdio as %s (from %s)", token.subject or token.client_id, TOKEN_VARIABLE)
    return token
