"""`ServerRequestContext`: what a low-level handler knows about, and can send for, one request."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypeVar

from mcpdi._auth import get_access_token, principal_of
from mcpdi.engine._records import built_fast
from mcpdi.lowlevel._envelope import LOG_LEVELS, Envelope, progress_token_of
from mcpdi.lowlevel._errors import NoBackChannel
from mcpdi.lowlevel._request_session import RequestSession, progress_params

if TYPE_CHECKING:
    from mcp_types import ClientCapabilities, Implementation

    from mcpdi.lowlevel._connection import Connection, Peer
    from mcpdi.lowlevel._jsonrpc import RequestId

__all__ = ("LifespanT", "ServerRequestContext")

LifespanT = TypeVar("LifespanT", default=Any)


@built_fast
@dataclass(frozen=True, slots=True)
class ServerRequestContext(Generic[LifespanT]):
    """Handed to every low-level handler as its first argument.

    `protocol_version`, `client_capabilities` and `client_info` come from the request's own
    envelope at 2026-07-28 and from `initialize` in the handshake era. `log_level` is the
    level the client asked for (the envelope's `logLevel` opt-in at 2026-07-28;
    `logging/setLevel` in the handshake era, read live from the connection). `principal` is
    the caller `requestState` is sealed to: the one an in-memory call names, else the verified
    bearer token's (client, subject) pair as `principal_of` writes it; None when anonymous.
    `on_failure` is told the exception behind an error result a handler returns instead of
    raising (a failed tool call's `isError` result), so an in-process caller can raise it.
    """

    lifespan_context: LifespanT
    protocol_version: str | None
    era: Literal["legacy", "modern"]
    method: str
    request_id: RequestId | None
    meta: Mapping[str, Any] | None
    client_capabilities: ClientCapabilities | None
    client_info: Implementation | None
    connection: Connection
    peer: Peer
    requested_log_level: str | None = None
    principal: Any = field(default=None)
    on_failure: Callable[[Exception], None] | None = None

    @classmethod
    def for_request(
        cls,
        lifespan_context: LifespanT,
        connection: Connection,
        peer: Peer,
        method: str,
        *,
        request_id: RequestId | None = None,
        meta: Mapping[str, Any] | None = None,
        envelope: Envelope | None = None,
        principal: Any = None,
        on_failure: Callable[[Exception], None] | None = None,
    ) -> ServerRequestContext[LifespanT]:
        """The context of one request: with an `envelope`, a 2026-07-28 request as its envelope
        describes it; without, a handshake-era one as the connection's `initialize` did."""
        if principal is None:
            principal = principal_of(get_access_token())
        if envelope is not None:
            return cls(
                lifespan_context,
                envelope.protocol_version,
                "modern",
                method,
                request_id,
                meta,
                envelope.client_capabilities,
                envelope.client_info,
                connection,
                peer,
                envelope.log_level,
                principal,
                on_failure,
            )
        return cls(
            lifespan_context,
            connection.protocol_version,
            "legacy",
            method,
            request_id,
            meta,
            connection.client_capabilities,
            connection.client_info,
            connection,
            peer,
            None,
            principal,
            on_failure,
        )

    @property
    def headers(self) -> Mapping[str, str] | None:
        """Lower-cased HTTP request headers; None off HTTP."""
        return self.peer.headers

    @property
    def progress_token(self) -> str | int | None:
        """The request's `_meta.progressToken`, if the client asked for progress."""
        return progress_token_of(self.meta)

    @property
    def log_level(self) -> str | None:
        """The least severe level the client wants to hear about; None: modern → none, legacy → all."""
        if self.era == "modern":
            return self.requested_log_level
        return self.connection.log_level

    @property
    def session(self) -> RequestSession:
        """The official SDK's `ServerSession` methods for this request (`send_log_message`, ...)."""
        return RequestSession(self)

    async def send_notification(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification related to this request."""
        await self.peer.notify(method, params)

    async def send_request(
        self, method: str, params: Mapping[str, Any] | None = None, *, asking: str | None = None
    ) -> dict[str, Any]:
        """Send a server-to-client request and return the client's raw `result` (handshake era only).

        `asking` names the resolver step that asks (its wire key), for the peer (`Peer.request`).

        Raises `NoBackChannel` at 2026-07-28 (return an `InputRequiredResult` instead) or when
        the transport cannot carry it, and `MCPError` when the client answers with an error.
        """
        if self.era == "modern":
            reason = (
                f"protocol {self.protocol_version} has no server-to-client requests; "
                "return an InputRequiredResult with inputRequests instead"
            )
            raise NoBackChannel(method, reason)
        return await self.peer.request(method, params, asking=asking)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` if the client asked for progress; else do nothing."""
        token = self.progress_token
        if token is None:
            return
        await self.peer.notify("notifications/progress", progress_params(token, progress, total, message))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` if the client wants messages of this level.

        At 2026-07-28 only when the request opted in with `_meta` logLevel (and `level` is at
        least that severe); in the handshake era unless `logging/setLevel` asked for a more
        severe level.
        """
        if level not in LOG_LEVELS:
            msg = f"log level {level!r} is not one of {', '.join(LOG_LEVELS)}; pass one of those to ctx.log()"
            raise ValueError(msg)
        threshold = self.log_level
        if threshold is None:
            if self.era == "modern":
                return
        elif LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.peer.notify("notifications/message", params)
