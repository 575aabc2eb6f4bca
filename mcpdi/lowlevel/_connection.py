"""What the core knows about one client connection (`Connection`) and asks of a transport (`Peer`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    import anyio
    from mcp_types import ClientCapabilities, Implementation

    from mcpdi.lowlevel._jsonrpc import RequestId

__all__ = ("Connection", "Era", "Peer")

Era: TypeAlias = Literal["unset", "legacy", "modern"]
"""A connection's protocol era: "legacy" is the handshake era (versions `initialize` negotiates),
"modern" is 2026-07-28, "unset" is before either is known."""


class Peer(Protocol):
    """What a transport gives the core for one inbound message.

    `notify` sends a notification related to the request being handled (progress, log).
    `request` sends a server-to-client request (handshake era only) and returns the raw
    `result`; it raises `MCPError` when the client answered with an error and
    `NoBackChannel` when the transport cannot carry a request. `asking` is the wire key of
    the resolver step that asks, when one does: a transport ignores it, an in-memory client
    answers by it.
    """

    @property
    def headers(self) -> Mapping[str, str] | None:
        """Lower-cased HTTP request headers; None off HTTP."""
        ...

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None: ...

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]: ...


class Connection:
    """Per-connection state: one per stdio process, legacy HTTP session or modern HTTP request.

    Build it with the constructor matching the transport:

    - `Connection.for_stream()` (stdio and other byte streams): the era is decided by the
      first request that is accepted (an `initialize` or any request without the modern
      envelope → legacy; a request with a valid 2026-07-28 envelope → modern); afterwards
      requests of the other era are refused with the messages of protocol.md §1.6.
    - `Connection.for_legacy_session()` (a handshake-era HTTP session): legacy; a modern
      `_meta` envelope on a request is ignored and the request served.
    - `Connection.for_modern_request()` (one modern HTTP POST): modern; methods that do not
      exist at 2026-07-28 (`initialize`, `ping`, ...) are `-32601`.

    The runner mutates it (`initialize`, `notifications/initialized`, `logging/setLevel`);
    transports only read it. With `transport_cancels`, no `notifications/cancelled` reaches
    the runner on this connection: the transport cancels a request by cancelling the task
    awaiting `Runner.handle`, so the runner keeps no cancel scopes (`in_flight` stays empty).
    With `http_headers` (a modern HTTP request's `(lower-cased name, value)` pairs, repeats
    kept), the runner checks them against the request before serving it (`_http_checks`).
    `standalone`, set by a transport that can, sends a notification to the client outside
    any request (the handshake era's GET stream, stdout): `resources/subscribe` needs it.
    `handler_failures`, set by an in-process peer that wants a crashing handler's exception
    itself (the client's `raise_exceptions=True`), receives each one by request id; the
    request is then answered `-32603` with the exception's text instead of a generic one.
    """

    __slots__ = (
        "__weakref__",
        "client_capabilities",
        "client_info",
        "era",
        "handler_failures",
        "http_headers",
        "in_flight",
        "initialized",
        "locks_era",
        "log_level",
        "protocol_version",
        "standalone",
        "transport_cancels",
    )

    era: Era
    protocol_version: str | None
    client_capabilities: ClientCapabilities | None
    client_info: Implementation | None
    log_level: str | None
    initialized: bool
    locks_era: bool
    transport_cancels: bool
    in_flight: dict[RequestId, anyio.CancelScope]
    http_headers: Sequence[tuple[str, str]] | None
    standalone: Callable[[str, Mapping[str, Any] | None], Awaitable[None]] | None
    handler_failures: dict[RequestId, Exception] | None

    def __init__(
        self, era: Era = "unset", *, locks_era: bool = False, transport_cancels: bool = False
    ) -> None:
        self.era = era
        self.locks_era = locks_era
        self.transport_cancels = transport_cancels
        self.protocol_version = None
        self.client_capabilities = None
        self.client_info = None
        self.log_level = None
        self.initialized = False
        self.in_flight = {}
        self.http_headers = None
        self.standalone = None
        self.handler_failures = None

    @classmethod
    def for_stream(cls, *, transport_cancels: bool = False) -> Connection:
        """A stdio-like connection: the first accepted request picks the era for good.

        A transport that takes `notifications/cancelled` itself (stdio does) passes
        `transport_cancels=True`; an in-memory peer leaves the runner to cancel.
        """
        return cls("unset", locks_era=True, transport_cancels=transport_cancels)

    @classmethod
    def for_legacy_session(cls) -> Connection:
        """A handshake-era HTTP session (starts uninitialized; `initialize` sets it up).

        The session's endpoint takes its `notifications/cancelled` (see `transport_cancels`).
        """
        return cls("legacy", transport_cancels=True)

    @classmethod
    def for_modern_request(cls, *, http_headers: Sequence[tuple[str, str]] | None = None) -> Connection:
        """One modern (2026-07-28) exchange (the transport cancels it; see `transport_cancels`).

        An HTTP transport passes the request's headers as `http_headers`: the runner then
        refuses a request whose routing or `Mcp-Param-*` headers disagree with its body.
        """
        connection = cls("modern", transport_cancels=True)
        connection.http_headers = http_headers
        return connection

    def __repr__(self) -> str:
        return (
            f"Connection(era={self.era!r}, protocol_version={self.protocol_version!r}, "
            f"initialized={self.initialized!r})"
        )
