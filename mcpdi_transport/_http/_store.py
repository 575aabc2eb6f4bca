"""What handshake-era sessions shared by several processes need from a store: registry, bus, events.

`build_http_app(sessions=...)` takes a `SessionStore` (mcpdi ships `RedisSessions`); without
one, each process keeps its sessions in memory. A store that cannot be reached raises
`StoreUnavailable` from the call that needed it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ("EventStore", "Reservation", "SessionStore", "Trimmed")

Reservation = Literal["reserved", "full", "peer full"]
"""What `SessionStore.reserve` decided for a new session."""


@dataclass(frozen=True, slots=True)
class Trimmed:
    """The session's byte budget dropped the events of stream `key` numbered below `first_kept`;
    `writer` (the process writing that stream) drops them from its memory too."""

    writer: str
    key: str
    first_kept: int


class EventStore(Protocol):
    """The events of resumable SSE streams, by stream key, kept for a client that resumes anywhere.

    Event `n` of a stream is stored under its number; `read` returns the events after a
    number and whether the writer ended the stream. A stream key is `<session id>:<stream id>`:
    the events of all streams of one session count against one byte budget, whichever process
    writes them.
    """

    async def append(
        self, key: str, events: Sequence[tuple[int, bytes]], *, ttl: float, writer: str, max_bytes: int
    ) -> list[Trimmed]:
        """Store `(number, frame)` pairs in order (a pair stored already is not stored or counted
        again); the stream is kept `ttl` seconds after its last write. When the session's
        streams then hold more than `max_bytes`, the oldest events go first, from the session's
        oldest stream on, all but this stream's newest event: what was dropped is returned."""
        ...

    async def begin(self, key: str, *, writer: str, answering: str, ttl: float) -> None:
        """Process `writer` opened the stream to answer the request `answering` (its id as JSON)."""
        ...

    async def end(self, key: str, *, ttl: float) -> None:
        """The writer closed the stream: readers stop after its last event."""
        ...

    async def orphaned(self, key: str) -> str | None:
        """The request (its id as JSON) a stream not ended answers, once the process writing it
        holds no lease any more; None while it does, after the end, or when nobody `begin`s it."""
        ...

    async def trim(self, key: str, first_kept: int) -> None:
        """Forget the events numbered below `first_kept` (the session's byte budget dropped them)."""
        ...

    async def forget(self, key: str, *, writer: str) -> None:
        """Forget every event of the ended stream (read to its end), keeping only its end."""
        ...

    async def exists(self, key: str) -> bool:
        """Whether a process `begin`s or wrote the stream (it may have died before its first event)."""
        ...

    async def read(self, key: str, after: int, *, wait: float) -> tuple[list[tuple[int, bytes]], bool]:
        """The events numbered above `after` (waiting up to `wait` seconds for one), and whether it ended."""
        ...


class SessionStore(Protocol):
    """The registry of sessions (a record per id, expiring when idle) and a bus between processes."""

    @property
    def events(self) -> EventStore: ...

    async def reserve(
        self, session_id: str, *, peer: str, ttl: float, max_sessions: int, max_per_peer: int
    ) -> Reservation:
        """Count a new session against the caps, across every process using the store:
        `"peer full"` when `peer` holds `max_per_peer` live sessions, `"full"` at `max_sessions`,
        else `"reserved"` (the slot lasts `ttl` seconds, then as long as the session lives).
        A session that ended or expired no longer counts."""
        ...

    async def create(self, session_id: str, record: Mapping[str, str], *, ttl: float) -> bool:
        """Store a new session's record (its fields); False if the id is taken."""
        ...

    async def load(self, session_id: str, *, ttl: float) -> dict[str, str] | None:
        """The record, its expiry pushed `ttl` seconds out; None for a session that ended or expired."""
        ...

    async def save(self, session_id: str, changes: Mapping[str, str], *, ttl: float) -> bool:
        """Write the fields in `changes` of a live session, leaving the others as they are (two
        processes changing different fields at once both keep theirs); False (nothing stored)
        when it has ended."""
        ...

    async def touch(self, session_ids: Sequence[str], *, ttl: float | None) -> list[bool]:
        """Which of the sessions still live; with a `ttl`, their expiry is pushed out too."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Remove the record (every process then answers 404) and the session's stored events
        with their count; False if it had already ended."""
        ...

    async def publish(self, message: Mapping[str, Any]) -> bool:
        """Send a message to every other live process (`message["from"]` is the sender), or to
        the one `message["to"]` names: False when that one is not alive. Once this returns,
        the message is kept for its process until it takes it (an outage of its connection
        loses nothing); a store that cannot take it raises `StoreUnavailable`."""
        ...

    def listen(self, process: str) -> AsyncIterator[dict[str, Any]]:
        """The messages for `process`, until cancelled (reading again after an outage); the
        process counts as alive while it listens."""
        ...

    async def end_lease(self, process: str) -> None:
        """`process` stops listening, its last writes done: it is gone for the others at once."""
        ...

    async def aclose(self) -> None: ...
