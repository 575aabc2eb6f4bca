"""Where the handshake-era endpoint keeps its sessions: `SessionRegistry`, and `LocalSessions` in memory.

The endpoint (`LegacyEndpoint`) serves HTTP; the registry it is given decides where a
session lives, how many there may be, and what serving a message of one must keep.
`LocalSessions` keeps them in this process; `SharedSessions` (`_shared.py`) in a
`SessionStore` every process reads.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

import anyio

from mcpdi.lowlevel import INTERNAL_ERROR, INVALID_REQUEST, Peer, Request
from mcpdi_transport._http._common import AppOptions, Running, error_body, handle_safely
from mcpdi_transport._http._legacy_session import LegacySession
from mcpdi_transport._http._sse import EventStream, TotalBudget

__all__ = ("ALL_CONNECTED", "LocalSessions", "Refusal", "SessionRegistry", "peer_full")

logger = logging.getLogger("mcpdi_transport")

_SWEEP_INTERVAL: Final = 60.0

ALL_CONNECTED: Final = "Too many open sessions, each with a client connected; try again later"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no session was opened: the HTTP status and the JSON-RPC error answering `initialize`."""

    status: int
    code: int
    message: str

    def body(self) -> dict[str, Any]:
        return error_body(self.code, self.message)


def peer_full(options: AppOptions) -> Refusal:
    problem = (
        f"Too many open sessions for this client (max_sessions_per_peer="
        f"{options.max_sessions_per_peer}); end one with DELETE or try again later"
    )
    return Refusal(429, INVALID_REQUEST, problem)


class SessionRegistry(Protocol):
    """The sessions a `LegacyEndpoint` serves: opened, found, served, ended.

    `remote` registries reach a store over the network: their calls may raise
    `StoreUnavailable`, which the endpoint answers with 503.
    """

    remote: ClassVar[bool]

    async def open(self, principal: str | None, peer: str) -> LegacySession | Refusal:
        """A new session for an `initialize` (`principal` created it, it counts against `peer`)."""
        ...

    async def attach(self, session_id: str) -> LegacySession | None:
        """The live session `session_id`, ready to serve; None (404) when there is none."""
        ...

    async def end(self, session: LegacySession) -> None:
        """The client ended the session (DELETE): it is gone everywhere."""
        ...

    def serve(
        self,
        running: Running,
        session: LegacySession,
        message: Mapping[str, Any] | Request,
        peer: Peer,
        *,
        on_wait: Callable[[anyio.CancelScope], None] | None = None,
        answer_late: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> Awaitable[dict[str, Any] | None]:
        """Serve one message of `session` (`handle_safely`), keeping what it changed.

        `message` is a parsed message, or a `Request` the endpoint already classified;
        `on_wait` is given the request's cancel scope once its handler waits; `loop` is the
        running asyncio loop, when the endpoint has it."""
        ...

    async def undelivered(self, session: LegacySession, message: Mapping[str, Any]) -> None:
        """A response or `notifications/cancelled` for nothing this process runs."""
        ...

    async def find_stream(self, session: LegacySession, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream holding `last_event_id` and the index to resume it from."""
        ...

    def end_all(self) -> None:
        """The app stops: end every session this process serves."""
        ...

    async def run(self, running: Running) -> None:
        """The registry's own work (ending idle sessions, ...), in the app's lifespan until cancelled."""
        ...


class LocalSessions:
    """Sessions in this process's memory, at most `max_sessions` (`max_sessions_per_peer` a peer)."""

    remote: ClassVar[bool] = False

    def __init__(self, options: AppOptions, total_budget: TotalBudget | None = None) -> None:
        self.options = options
        self.total_budget = total_budget or TotalBudget(
            options.max_buffered_bytes_total, options.max_pending_client_requests
        )
        """The bytes of buffered events all sessions of this app hold, and their waiting questions."""
        self.by_id: dict[str, LegacySession] = {}
        self.per_peer: dict[str, int] = {}
        """How many of `by_id` each peer (`peer_of`) holds."""

    # -- SessionRegistry -------------------------------------------------------------------------

    async def open(self, principal: str | None, peer: str) -> LegacySession | Refusal:
        if self.peer_at_cap(peer):
            return peer_full(self.options)
        if not self.make_room():
            return Refusal(503, INTERNAL_ERROR, ALL_CONNECTED)
        return self.add(self.new_session(self.options.session_id_prefix + uuid.uuid4().hex, principal, peer))

    async def attach(self, session_id: str) -> LegacySession | None:
        return self.by_id.get(session_id)

    async def end(self, session: LegacySession) -> None:
        self.end_session(session)

    def serve(
        self,
        running: Running,
        session: LegacySession,
        message: Mapping[str, Any] | Request,
        peer: Peer,
        *,
        on_wait: Callable[[anyio.CancelScope], None] | None = None,
        answer_late: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> Coroutine[Any, Any, dict[str, Any] | None]:
        # `handle_safely` itself, no coroutine around it: nothing is kept beyond the session in memory.
        return handle_safely(
            running, message, session.connection, peer, answer_late=answer_late, on_wait=on_wait, loop=loop
        )

    async def undelivered(self, session: LegacySession, message: Mapping[str, Any]) -> None:
        """Dropped: no other process could be running it."""

    async def find_stream(self, session: LegacySession, last_event_id: str) -> tuple[EventStream, int] | None:
        return session.find_stream(last_event_id)

    def end_all(self) -> None:
        for session in list(self.by_id.values()):
            self.end_session(session)

    async def run(self, running: Running) -> None:
        while True:
            await anyio.sleep(min(_SWEEP_INTERVAL, self.options.session_idle_timeout))
            self.sweep_idle()

    # -- the table ---------------------------------------------------------------------------------

    def new_session(self, session_id: str, principal: str | None, peer: str) -> LegacySession:
        return LegacySession(
            session_id=session_id,
            principal=principal,
            peer=peer,
            max_buffered_bytes=self.options.max_buffered_bytes,
            client_request_timeout=self.options.client_request_timeout,
            total_budget=self.total_budget,
        )

    def add(self, session: LegacySession) -> LegacySession:
        self.by_id[session.session_id] = session
        self.per_peer[session.peer] = self.per_peer.get(session.peer, 0) + 1
        return session

    def end_session(self, session: LegacySession) -> None:
        if self.by_id.get(session.session_id) is session:
            del self.by_id[session.session_id]
            left = self.per_peer.pop(session.peer, 1) - 1
            if left:
                self.per_peer[session.peer] = left
        session.end()

    def sweep_idle(self) -> None:
        """End sessions whose client has done nothing for `session_idle_timeout` seconds.

        A request still running (say, waiting on a question the client never answers) does
        not keep a session alive; an open stream to the client does.
        """
        deadline = anyio.current_time() - self.options.session_idle_timeout
        for session in list(self.by_id.values()):
            if session.idle_since(deadline):
                logger.info("ending idle session %s", session.session_id)
                self.end_session(session)

    def peer_at_cap(self, peer: str, sweep: Callable[[], None] | None = None) -> bool:
        """Whether `peer` holds `max_sessions_per_peer` sessions even after idle ones ended
        (by `sweep`, `sweep_idle` by default)."""
        if self.per_peer.get(peer, 0) < self.options.max_sessions_per_peer:
            return False
        (sweep or self.sweep_idle)()
        return self.per_peer.get(peer, 0) >= self.options.max_sessions_per_peer

    def make_room(self, sweep: Callable[[], None] | None = None) -> bool:
        """At the session cap, end a session with no open stream: the least recently active
        one of the peer holding the most sessions (so that a peer filling the table ends its own).

        False when every session has a client connected right now (then a new one is refused).
        """
        if len(self.by_id) < self.options.max_sessions:
            return True
        (sweep or self.sweep_idle)()
        if len(self.by_id) < self.options.max_sessions:
            return True
        victim = self.victim()
        if victim is None:
            return False
        logger.info(
            "session cap reached: ending session %s, the least recently active of its client's %d",
            victim.session_id,
            self.per_peer.get(victim.peer, 0),
        )
        self.end_session(victim)
        return True

    def victim(self, also: Callable[[LegacySession], bool] | None = None) -> LegacySession | None:
        """The session to end for a newcomer: with no client connected (and `also` true of it),
        the least recently active one of the peer holding the most sessions."""
        abandoned = [
            session
            for session in self.by_id.values()
            if not session.connected and (also is None or also(session))
        ]
        if not abandoned:
            return None
        per_peer = self.per_peer
        return max(abandoned, key=lambda session: (per_peer.get(session.peer, 0), -session.last_active))
