"""The official SDK's HTTP app options (`stateless_http=`, `transport_security=`, ...) in mcpdi's terms.

`Server.streamable_http_app`, `MCPServer.streamable_http_app` and `run` take both
spellings; this module is the one place that maps the SDK's onto `build_http_app`'s, and
refuses, naming what to use instead, those mcpdi does not take.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, Field

__all__ = ("TransportSecuritySettings", "app_options")


class TransportSecuritySettings(BaseModel):
    """Host and Origin checks against DNS rebinding, as the official SDK configures them.

    `streamable_http_app(transport_security=...)` takes it (or the SDK's own object);
    mcpdi's spelling is `dns_rebinding_protection=`, `allowed_hosts=`, `allowed_origins=`.
    """

    enable_dns_rebinding_protection: bool = True
    allowed_hosts: list[str] = Field(default_factory=list[str])
    allowed_origins: list[str] = Field(default_factory=list[str])


_RENAMED: Final[Mapping[str, str]] = {
    "streamable_http_path": "path",
    "stateless_http": "stateless",
    "max_request_body_size": "max_body_size",
    "custom_starlette_routes": "routes",
    "retry_interval": "sse_retry_ms",
}
_SECURITY_OPTIONS: Final = ("dns_rebinding_protection", "allowed_hosts", "allowed_origins")
_EVENT_STORE: Final = (
    "streamable_http_app(event_store=...) is not taken by mcpdi: every stream's events are kept "
    "for resumption already (max_buffered_bytes= bounds them); for a store that several "
    "processes share, pass sessions=RedisSessions(url) (from mcpdi_transport)"
)
_AUTH_SERVER_PROVIDER: Final = (
    "auth_server_provider= is not taken by mcpdi, which serves as a resource server only: "
    "verify the tokens your authorization server issues with token_verifier= "
    "(mcpdi_transport.JwtVerifier for JWTs) and auth=AuthSettings(issuer_url=...)"
)


def _security(settings: Any) -> dict[str, Any]:
    if not settings.enable_dns_rebinding_protection:
        return {"dns_rebinding_protection": False}
    return {
        "dns_rebinding_protection": True,
        "allowed_hosts": list(settings.allowed_hosts),
        "allowed_origins": list(settings.allowed_origins),
    }


def app_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with the SDK's names mapped to `build_http_app`'s; mcpdi's own names pass as given.

    `None` for `retry_interval`, `event_store`, `transport_security`,
    `custom_starlette_routes` or `auth_server_provider` means the default, as in the SDK;
    `None` for `session_idle_timeout` or `max_sessions` means no limit.
    """
    mapped: dict[str, Any] = {}
    for key, value in options.items():
        target = _RENAMED.get(key)
        if target is not None:
            _refuse_both(key, target, options)
            if value is not None:
                mapped[target] = value
        elif key == "event_store":
            if value is not None:
                raise TypeError(_EVENT_STORE)
        elif key == "auth_server_provider":
            if value is not None:
                raise TypeError(_AUTH_SERVER_PROVIDER)
        elif key == "transport_security":
            for name in _SECURITY_OPTIONS:
                _refuse_both(key, name, options)
            if value is not None:
                mapped.update(_security(value))
        elif key == "session_idle_timeout":
            mapped[key] = math.inf if value is None else value
        elif key == "max_sessions":
            mapped[key] = sys.maxsize if value is None else value
        else:
            mapped[key] = value
    return mapped


def _refuse_both(sdk_name: str, name: str, options: Mapping[str, Any]) -> None:
    if name in options:
        msg = f"{sdk_name}= (the official SDK's name) and {name}= set the same option: pass one of them"
        raise TypeError(msg)
