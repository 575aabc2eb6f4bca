"""HTTP request checks that run before any JSON-RPC: Content-Type, Host and Origin, the body size limit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = (
    "DEFAULT_MAX_BODY_SIZE",
    "LOOPBACK_HOSTS",
    "BodyLimit",
    "SecurityPolicy",
    "security_policy",
)

DEFAULT_MAX_BODY_SIZE: Final = 4 * 1024 * 1024
"""Request bodies above 4 MiB are refused with 413."""

LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

_LOOPBACK_ALLOWED_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_LOOPBACK_ALLOWED_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def _matches(value: str, patterns: tuple[str, ...]) -> bool:
    """Exact match, or a `base:*` pattern matching `base` with any port (or none)."""
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value == base:
                return True
            if value.startswith(base + ":") and value[len(base) + 1 :].isdigit():
                return True
    return False


@dataclass(frozen=True, slots=True)
class SecurityPolicy:
    """What a request's headers must satisfy before it is read.

    With `dns_rebinding_protection`, `Host` must match `allowed_hosts` (else 421) and an
    `Origin`, when sent, must match `allowed_origins` (else 403): a web page the user
    visits cannot reach a server bound to the user's own machine. A POST must always
    declare `Content-Type: application/json` (else 400).
    """

    dns_rebinding_protection: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]

    def check(self, method: str, headers: Mapping[str, str]) -> Response | None:
        """The rejection for this request, or None when it may proceed.

        `headers`: lower-cased names to the first value of each request header.
        """
        if method == "POST":
            content_type = headers.get("content-type", "")
            if not content_type.lower().startswith("application/json"):
                return PlainTextResponse("Invalid Content-Type header", status_code=400)
        if not self.dns_rebinding_protection:
            return None
        if not _matches(headers.get("host", ""), self.allowed_hosts):
            return PlainTextResponse("Invalid Host header", status_code=421)
        origin = headers.get("origin")
        if origin and not _matches(origin, self.allowed_origins):
            return PlainTextResponse("Invalid Origin header", status_code=403)
        return None


def security_policy(
    host: str,
    *,
    dns_rebinding_protection: bool | None,
    allowed_hosts: Iterable[str] | None,
    allowed_origins: Iterable[str] | None,
) -> SecurityPolicy:
    """Decide the policy for an app bound to `host`.

    `dns_rebinding_protection=None` turns the check on for loopback binds and whenever
    allowed hosts or origins are given; the allow-lists default to the loopback names
    with any port.
    """
    enabled = (
        dns_rebinding_protection
        if dns_rebinding_protection is not None
        else host in LOOPBACK_HOSTS or allowed_hosts is not None or allowed_origins is not None
    )
    hosts = tuple(allowed_hosts) if allowed_hosts is not None else _LOOPBACK_ALLOWED_HOSTS
    origins = tuple(allowed_origins) if allowed_origins is not None else _LOOPBACK_ALLOWED_ORIGINS
    return SecurityPolicy(enabled, hosts, origins)


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("Request body too large", status_code=413)(scope, receive, send)


class BodyLimit:
    """ASGI middleware refusing request bodies larger than `max_body_size` bytes with 413.

    The body is read here (declared `Content-Length` first, then the bytes actually
    received) and replayed to the app, so an oversized body never reaches JSON parsing.
    """

    def __init__(self, app: ASGIApp, max_body_size: int = DEFAULT_MAX_BODY_SIZE) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_size:
            await _too_large(scope, receive, send)
            return
        body = bytearray()
        buffered: list[Message] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                buffered.append(message)
                break
            body.extend(message.get("body", b""))
            if len(body) > self.max_body_size:
                await _too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}, *buffered]

        async def replaying_receive() -> Message:
            if replay:
                return replay.pop(0)
            return await receive()

        await self.app(scope, replaying_receive, send)
