"""HTTP request checks that run before any JSON-RPC: Content-Type, Host and Origin, the body size limit."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpdi_transport._http._first_step import Waiting, first_step, rest_of
from mcpdi_transport._http._loop import running_loop
from mcpdi_transport._http._ticker import Ticker

__all__ = (
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_SIZE",
    "BodyLimit",
    "BodyReader",
    "SecurityPolicy",
    "announced_security_policy",
    "is_json_media_type",
    "is_loopback",
    "replaying",
    "security_policy",
)

logger = logging.getLogger("mcpdi_transport")

DEFAULT_MAX_BODY_SIZE: Final = 4 * 1024 * 1024
"""Request bodies above 4 MiB are refused with 413."""

DEFAULT_BODY_TIMEOUT: Final = 30.0
"""Seconds a client may take to send a request body; a slower one gets 408."""

_LOOPBACK_ALLOWED_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_LOOPBACK_ALLOWED_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
_WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", "[::]", ""})


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only: `localhost`, 127.0.0.0/8, `::1`, `::ffff:127.x.y.z`."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _matches(value: str, patterns: tuple[str, ...]) -> bool:
    """Exact match (case-insensitive), or a `base:*` pattern matching `base` with any port (or none)."""
    value = value.lower()
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


_VerdictKey = tuple[bool, str, str, "str | None"]
"""A request's say in the checks: whether it is a POST, its Content-Type, Host and Origin."""
_VERDICTS_LIMIT: Final = 256
_UNDECIDED: Final[Any] = object()


def is_json_media_type(content_type: str) -> bool:
    """Whether a `Content-Type` names exactly `application/json` (parameters allowed)."""
    return content_type.partition(";")[0].strip().lower() == "application/json"


@dataclass(frozen=True, slots=True)
class SecurityPolicy:
    """What a request's headers must satisfy before it is read.

    With `check_host`, `Host` must match `allowed_hosts` (else 421); with `check_origin`,
    an `Origin`, when sent, must match `allowed_origins` (else 403): a web page the user
    visits cannot reach a server on the user's machine or network. A POST must always
    declare `Content-Type: application/json` (else 400).
    """

    check_host: bool
    check_origin: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """What an operator should hear at start: checks that are off, and why."""
    _verdicts: dict[_VerdictKey, tuple[str, int] | None] = field(
        init=False, repr=False, compare=False, hash=False
    )

    @property
    def dns_rebinding_protection(self) -> bool:
        return self.check_host or self.check_origin

    def __post_init__(self) -> None:
        object.__setattr__(self, "_verdicts", {})

    def check(self, method: str, headers: Mapping[str, str]) -> Response | None:
        """The rejection for this request, or None when it may proceed.

        `headers`: lower-cased names to the first value of each request header. A client
        sends the same three on every request, so each verdict is kept (bounded: emptied
        when full).
        """
        key = (
            method == "POST",
            headers.get("content-type", ""),
            headers.get("host", ""),
            headers.get("origin"),
        )
        verdicts = self._verdicts
        verdict = verdicts.get(key, _UNDECIDED)
        if verdict is _UNDECIDED:
            verdict = self._verdict(*key)
            if len(verdicts) >= _VERDICTS_LIMIT:
                verdicts.clear()
            verdicts[key] = verdict
        if verdict is None:
            return None
        text, status = verdict
        return PlainTextResponse(text, status_code=status)

    def _verdict(
        self, post: bool, content_type: str, host: str, origin: str | None
    ) -> tuple[str, int] | None:
        if post and not is_json_media_type(content_type):
            return "Invalid Content-Type header", 400
        if self.check_host and not _matches(host, self.allowed_hosts):
            return "Invalid Host header", 421
        if self.check_origin and origin and not _matches(origin, self.allowed_origins):
            return "Invalid Origin header", 403
        return None


def _lowered(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(value.strip().lower().rstrip("/") for value in values)


def announced_security_policy(
    host: str,
    *,
    dns_rebinding_protection: bool | None,
    allowed_hosts: Iterable[str] | None,
    allowed_origins: Iterable[str] | None,
) -> SecurityPolicy:
    """`security_policy`, with each check it leaves off logged once, as an app starts."""
    policy = security_policy(
        host,
        dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    for warning in policy.warnings:
        logger.warning("%s", warning)
    return policy


def security_policy(
    host: str,
    *,
    dns_rebinding_protection: bool | None,
    allowed_hosts: Iterable[str] | None,
    allowed_origins: Iterable[str] | None,
) -> SecurityPolicy:
    """Decide the policy for an app bound to `host`.

    Checks are on unless `dns_rebinding_protection=False`. Allowed hosts default to the
    loopback names plus the bound address (any port); allowed origins to the loopback
    origins plus `http://<bound address>` (any port). A wildcard bind (`0.0.0.0`, `::`)
    cannot know its own names: without `allowed_hosts` the Host check is off (and said so),
    while foreign Origins are still refused.
    """
    warnings: list[str] = []
    if dns_rebinding_protection is False:
        warnings.append(
            "Host and Origin checks are off (dns_rebinding_protection=False): any web page the "
            "user visits can call this server"
        )
        return SecurityPolicy(False, False, (), (), tuple(warnings))
    bound = host.strip().lower()
    wildcard = bound in _WILDCARD_HOSTS
    own: tuple[str, ...] = ()
    if not wildcard and not is_loopback(bound):
        name = f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound
        own = (name,)
    if allowed_hosts is not None:
        hosts = _lowered(allowed_hosts)
    else:
        hosts = (*_LOOPBACK_ALLOWED_HOSTS, *(f"{name}:*" for name in own))
    if allowed_origins is not None:
        origins = _lowered(allowed_origins)
    else:
        origins = (*_LOOPBACK_ALLOWED_ORIGINS, *(f"http://{name}:*" for name in own))
    check_host = not (wildcard and allowed_hosts is None)
    if not check_host:
        warnings.append(
            f"bound to {host or 'every address'}: the Host header is not checked; pass the names "
            "clients use with allowed_hosts (mcpdi run --allow-host) to guard against DNS rebinding"
        )
    if not is_loopback(bound) and allowed_origins is None:
        warnings.append(
            f"bound to {host or 'every address'}, beyond loopback: browser pages are refused unless "
            "their Origin is allowed (mcpdi run --allow-origin https://app.example)"
        )
    return SecurityPolicy(check_host, True, hosts, origins, tuple(warnings))


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("Request body too large", status_code=413)(scope, receive, send)


async def _too_slow(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("Request body not received in time", status_code=408)(scope, receive, send)


_TOO_LARGE: Final = "too large"
_TOO_SLOW: Final = "too slow"


async def _collect_body(receive: Receive, max_body_size: int) -> tuple[bytes, list[Message]] | str:
    """The body, and a message that came instead of more of it (a disconnect); or `_TOO_LARGE`."""
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        body: bytes = message.get("body", b"")  # the usual case: the whole body in one message
        return _TOO_LARGE if len(body) > max_body_size else (body, [])
    return await _collect_rest(receive, max_body_size, message)


async def _collect_rest(
    receive: Receive, max_body_size: int, message: Message
) -> tuple[bytes, list[Message]] | str:
    """`_collect_body` once its first `message` came and did not hold the whole body."""
    collected = bytearray()
    while True:
        if message["type"] != "http.request":
            return bytes(collected), [message]
        collected.extend(message.get("body", b""))
        if len(collected) > max_body_size:
            return _TOO_LARGE
        if not message.get("more_body", False):
            return bytes(collected), []
        message = await receive()


async def read_body(
    receive: Receive, max_body_size: int, body_timeout: float, ticker: Ticker | None = None
) -> tuple[bytes, list[Message]] | str:
    """`_collect_body` within `body_timeout` seconds, else `_TOO_SLOW`.

    On asyncio the deadline cancels this task from `ticker` (a `Ticker` of this loop whose
    delay is `body_timeout`; one is made when none is given), the cancel undone where it
    is caught (the protocol of `asyncio.timeout`, so a cancellation from elsewhere passes
    through): an anyio cancel scope or a timer per request costs several times more.
    """
    loop = running_loop()  # None: not on asyncio (trio)
    task = asyncio.current_task(loop) if loop is not None else None
    if loop is None or task is None:
        with anyio.move_on_after(body_timeout):
            return await _collect_body(receive, max_body_size)
        return _TOO_SLOW
    if ticker is None or ticker.loop is not loop:
        ticker = body_ticker(loop, body_timeout)
    return await _collect_body_within(receive, max_body_size, ticker, task)


async def _collect_body_within(
    receive: Receive, max_body_size: int, ticker: Ticker, task: asyncio.Task[Any] | None = None
) -> tuple[bytes, list[Message]] | str:
    """`_collect_body` before `ticker`'s deadline, else `_TOO_SLOW`.

    On asyncio, in `task` (this one by default). A body the server has already (most are, by
    the time the app reads them) comes before any deadline could pass: it is taken without one.
    """
    first = first_step(receive())
    if not isinstance(first, Waiting) and first["type"] == "http.request" and not first.get("more_body"):
        body: bytes = first.get("body", b"")
        return _TOO_LARGE if len(body) > max_body_size else (body, [])
    if task is None:
        task = cast("asyncio.Task[Any]", asyncio.current_task(ticker.loop))
    cancelling = task.cancelling()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    deadline = ticker.add(expire)
    try:
        message = await rest_of(first) if isinstance(first, Waiting) else first  # `_collect_body`, inline
        if message["type"] == "http.request" and not message.get("more_body", False):
            body = message.get("body", b"")
            return _TOO_LARGE if len(body) > max_body_size else (body, [])
        return await _collect_rest(receive, max_body_size, message)
    except asyncio.CancelledError:
        if expired and task.uncancel() <= cancelling:
            return _TOO_SLOW
        raise
    finally:
        ticker.discard(deadline)


def body_ticker(loop: asyncio.AbstractEventLoop, body_timeout: float) -> Ticker:
    """The `Ticker` for body deadlines: late by at most a tenth of the timeout (and 1 s)."""
    return Ticker(loop, body_timeout, min(1.0, body_timeout / 10))


class BodyReader:
    """Reads a request's body within `max_body_size` bytes (else 413) and `body_timeout` seconds (else 408).

    The declared `Content-Length` is checked first, then the bytes actually received, so an
    oversized body never reaches JSON parsing, and a client trickling bytes cannot hold a
    request open for long.
    """

    __slots__ = ("_ticker", "body_timeout", "max_body_size")

    def __init__(
        self, max_body_size: int = DEFAULT_MAX_BODY_SIZE, body_timeout: float = DEFAULT_BODY_TIMEOUT
    ) -> None:
        self.max_body_size = max_body_size
        self.body_timeout = body_timeout
        self._ticker: Ticker | None = None

    async def read(
        self, scope: Scope, receive: Receive, send: Send, loop: asyncio.AbstractEventLoop | None = None
    ) -> tuple[bytes, list[Message]] | None:
        """The body, and a message that came instead of more of it (a disconnect); None once refused.

        A refused request has had its answer (413 or 408) sent here. `loop`: the running
        loop, when the caller has it (`running_loop`); else it is asked for.
        """
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.max_body_size:
                    await _too_large(scope, receive, send)
                    return None
                break
        if loop is None:
            loop = running_loop()
        if loop is None:  # not on asyncio (trio): `read_body` takes anyio's way
            outcome = await read_body(receive, self.max_body_size, self.body_timeout)
        else:
            ticker = self._ticker
            if ticker is None or ticker.loop is not loop:
                ticker = self._ticker = body_ticker(loop, self.body_timeout)
            outcome = await _collect_body_within(receive, self.max_body_size, ticker)
        if outcome == _TOO_LARGE:
            await _too_large(scope, receive, send)
            return None
        if outcome == _TOO_SLOW:
            await _too_slow(scope, receive, send)
            return None
        return cast("tuple[bytes, list[Message]]", outcome)


def replaying(messages: list[Message], receive: Receive) -> Receive:
    """`receive`, giving `messages` first (in order)."""

    async def replaying_receive() -> Message:
        if messages:
            return messages.pop(0)
        return await receive()

    return replaying_receive


class BodyLimit:
    """ASGI middleware refusing request bodies larger than `max_body_size` bytes with 413,
    and bodies that take longer than `body_timeout` seconds to arrive with 408.

    The body is read here (`BodyReader`) and replayed to the app. Requests at `exempt_path`
    pass untouched: their route applies its own limit (the MCP endpoint reads its own body,
    behind bearer auth, which must answer before any body is read).
    """

    def __init__(
        self,
        app: ASGIApp,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        exempt_path: str | None = None,
    ) -> None:
        self.app = app
        self.reader = BodyReader(max_body_size, body_timeout)
        self.exempt_path = exempt_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.exempt_path is not None and scope["path"] == self.exempt_path):
            await self.app(scope, receive, send)
            return
        read = await self.reader.read(scope, receive, send)
        if read is None:
            return
        body, buffered = read
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *buffered]
        await self.app(scope, replaying(replay, receive), send)
