"""The ASGI scope of the HTTP request being answered, which HTTP transports set for handlers."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from mcpdi.lowlevel._context_value import ContextValue

__all__ = ("current_http_scope", "serving_http_request")

_SCOPE: ContextVar[Mapping[str, Any] | None] = ContextVar("mcpdi_http_scope", default=None)


def serving_http_request(scope: Mapping[str, Any]) -> ContextValue[Mapping[str, Any] | None]:
    """Run one HTTP request's handling with `scope` as its ASGI scope (for transports): `with` it."""
    return ContextValue(_SCOPE, scope)


def current_http_scope() -> Mapping[str, Any] | None:
    """The ASGI scope of the HTTP request whose message is being handled; None off HTTP."""
    return _SCOPE.get()
