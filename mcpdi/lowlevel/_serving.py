"""`ServingOptions`: what a server asks of whatever serves it, kept as data on the server.

A transport reads them from the server (`server.serving_options`) wherever it builds an app
or a stream, so bearer auth, the author's own HTTP routes and debug hold however the server
is started; a keyword given where it is started overrides the server's own value.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpdi._auth import AuthSettings, TokenVerifier

__all__ = ("CustomRoute", "ServingOptions")


@dataclass(frozen=True, slots=True)
class CustomRoute:
    """A plain HTTP endpoint served next to MCP: `async def endpoint(request) -> Response`."""

    path: str
    endpoint: Callable[[Any], Awaitable[Any]]
    methods: tuple[str, ...] | None = None
    name: str | None = None
    include_in_schema: bool = True


@dataclass(frozen=True, slots=True)
class ServingOptions:
    """The serving side of a server: its bearer auth, its own HTTP routes, its debug flag.

    `token_verifier` and `auth` come together or not at all. Over HTTP they guard the MCP
    endpoint (401 with a challenge, the Protected Resource Metadata); over stdio there is
    no request header to carry a token, so the transport says so at start (or takes one
    from the environment, see `mcpdi_transport.serve_stdio`).
    """

    token_verifier: TokenVerifier | None = None
    auth: AuthSettings | None = None
    routes: tuple[CustomRoute, ...] = ()
    debug: bool = False

    def __post_init__(self) -> None:
        if (self.token_verifier is None) != (self.auth is None):
            msg = "bearer auth needs both token_verifier= and auth=AuthSettings(issuer_url=...)"
            raise ValueError(msg)
