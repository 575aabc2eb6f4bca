"""The ASGI scope of the HTTP request being answered, which HTTP transports set for handlers."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ("current_http_scope", "serving_http_request")

_SCOPE: ContextVar[Mapping[str, Any] | None] = ContextVar("mcpdi_http_scope", default=None)


@contextmanager
def serving_http_request(scope: Mapping[str, Any]) -> Generator[None]:
    """Run one HTTP request's handling with `scope` as its ASGI scope (for transports)."""
    reset = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(reset)


def current_http_scope() -> Mapping[str, Any] | None:
    """The ASGI scope of the HTTP request whose message is being handled; None off HTTP."""
    return _SCOPE.get()
