"""`SharedSessions`: handshake-era sessions in a `SessionStore`, so any process serves any session.

A process keeps a replica of each session it serves (its connection state, its running
calls, the streams it writes), rebuilt from the stored record on the first request for it.
The record holds what `initialize` negotiated and the principal that created the session;
every request loads it (pushing its expiry out), so an ended or expired session is 404 on
every process. A response for a question another process asked goes into that process's
inbox in the store, a cancellation into every process's; the events of resumable streams
are copied to the store, so a client may resume (`Last-Event-ID`) on any process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Final, cast

import anyio
from mcp_types import ClientCapabilities, Implementation
from pydantic import BaseModel

from mcpdi.lowlevel import INTERNAL_ERROR, Connection, Peer, Request
from mcpdi_transport._http._common import AppOptions, Running, error_body, handle_safely
from mcpdi_transport._http._legacy_session import LegacySession
from mcpdi_transport._http._registry import LocalSessions, Refusal, peer_full
from mcpdi_transport._http._shared_streams import EVENT_ID, Mirror, MirroredStream, StoredStream
from mcpdi_transport._http._sse import EventStream, TotalBudget
from mcpdi_transport._http._store import Reservation, SessionStore, Trimmed
from mcpdi_transport._outbound import OutboundRequests
from mcpdi_transport._redis import StoreUnavailable

__all__ = ("SharedSessions",)

logger = logging.getLogger("mcpdi_transport")

_LOCAL_KEEP: Final = 60.0
"""Seconds a replica nobody uses stays in this process (the session itself lives on in the store)."""


SHARED_FULL: Final = (
    "Too many open sessions (max_sessions={}, counted across every process sharing them), "
    "none of them idle here; try again later"
)

GONE: Final = "The process that asked this question is gone, and the call with it"

_ASKED_ID: Final = re.compile(r"([0-9a-f]{16})\.[0-9a-f]{8}-[0-9]+")
"""The id of a question a process asked: `<process>.<replica>-<n>`."""


def _asker(request_id: object) -> str | None:
    """The process that asked the question answered under `request_id`, if one of ours did."""
    match = _ASKED_ID.fullmatch(request_id) if isinstance(request_id, str) else None
    return None if match is None else match[1]


def _wire(model: BaseModel) -> dict[str, Any]:
    """A wire type as the client sent it (its field names, no empty fields)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _stream_key(session_id: str, stream_id: str) -> str:
    return f"{session_id}:{stream_id}"


class SharedSession(LegacySession):
    """This process's replica of a session whose record lives in the store."""

    def __init__(
        self,
        *,
        session_id: str,
        principal: str | None,
        peer: str,
        mirror: Mirror,
        max_buffered_bytes: int,
        client_request_timeout: float,
        process: str,
        total_budget: TotalBudget | None = None,
    ) -> None:
        super().__init__(
            session_id=session_id,
            principal=principal,
            peer=peer,
            max_buffered_bytes=max_buffered_bytes,
            client_request_timeout=client_request_timeout,
            total_budget=total_budget,
        )
        # Questions of one session are asked by several processes: ids must not collide.
        # Each id names the process asking, which the client's answer is sent to.
        self.outbound = OutboundRequests(
            timeout=client_request_timeout,
            id_prefix=f"{process}.{secrets.token_hex(4)}-",
            budget=self.outbound.budget,
        )
        self.record: dict[str, str] | None = None
        """The record as last stored or loaded; None until `initialize` stored it."""
        self._mirror = mirror

    def new_stream(self, *, resumable: bool, answering: str | None = None) -> EventStream:
        if not resumable:
            return super().new_stream(resumable=False)
        stream_id = secrets.token_hex(8)
        key = _stream_key(self.session_id, stream_id)
        return MirroredStream(stream_id, key, budget=self.budget, mirror=self._mirror, answering=answering)

    def _forget(self, stream_id: str) -> None:
        stream = self.streams.get(stream_id)
        super()._forget(stream_id)
        if isinstance(stream, MirroredStream):
            stream.forget()

    def state(self) -> tuple[object, ...]:
        """What a record holds, to tell whether handling a message changed it."""
        c = self.connection
        return (c.protocol_version, c.client_capabilities, c.client_info, c.log_level, c.initialized)

    def to_record(self) -> dict[str, str]:
        """The record's fields, each a JSON text (`peer`, written once by `create`, aside)."""
        c = self.connection
        capabilities, info = c.client_capabilities, c.client_info
        fields: dict[str, object] = {
            "protocolVersion": c.protocol_version,
            "clientCapabilities": None if capabilities is None else _wire(capabilities),
            "clientInfo": None if info is None else _wire(info),
            "logLevel": c.log_level,
            "initialized": c.initialized,
            "principal": self.principal,
        }
        return {name: json.dumps(value, separators=(",", ":")) for name, value in fields.items()}

    def changes(self) -> dict[str, str]:
        """The fields this replica changed since the record was last stored or loaded."""
        stored = self.record or {}
        return {name: value for name, value in self.to_record().items() if stored.get(name) != value}

    def restore(self, record: Mapping[str, str]) -> None:
        """Take the connection state another process stored."""
        fields = {name: json.loads(value) for name, value in record.items() if name != "peer"}
        c: Connection = self.connection
        c.protocol_version = fields.get("protocolVersion")
        capabilities, info = fields.get("clientCapabilities"), fields.get("clientInfo")
        c.client_capabilities = (
            None if capabilities is None else ClientCapabilities.model_validate(capabilities)
        )
        c.client_info = None if info is None else Implementation.model_validate(info)
        c.log_level = fields.get("logLevel")
        c.initialized = bool(fields.get("initialized"))
        self.principal = fields.get("principal")
        self.record = dict(record)


class SharedSessions:
    """A `SessionRegistry` of sessions shared through `store`; `run` must run in the app's lifespan."""

    remote: ClassVar[bool] = True

    def __init__(self, options: AppOptions, store: SessionStore) -> None:
        self.options = options
        self.store = store
        self.ttl = options.session_idle_timeout
        self.process = secrets.token_hex(8)
        self.mirror = Mirror(
            store.events,
            self.ttl,
            writer=self.process,
            max_bytes=options.max_buffered_bytes,
            tell=self._tell_trimmed,
        )
        self.replicas = LocalSessions(options)
        """This process's replicas, the sessions it serves now."""
        self._running: Running | None = None

    @property
    def by_id(self) -> dict[str, LegacySession]:
        return self.replicas.by_id

    @property
    def total_budget(self) -> TotalBudget:
        return self.replicas.total_budget

    async def run(self, running: Running) -> None:
        """Copy events to the store, take other processes' messages, check replicas; until cancelled.

        Then the last events (the ends of the streams the app's shutdown closed) are written,
        so that clients resuming them elsewhere see them end, and the store is closed.
        """
        self._running = running
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.mirror.run)
                group.start_soon(self._listen)
                while True:
                    await anyio.sleep(min(_LOCAL_KEEP, self.ttl / 3))
                    self.sweep()
        finally:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(1):
                    await self.mirror.flush()
                with anyio.move_on_after(1), contextlib.suppress(StoreUnavailable):
                    await self.store.end_lease(self.process)  # after the last writes: readers see the ends
                with anyio.move_on_after(1):
                    await self.store.aclose()

    # -- replicas -----------------------------------------------------------------------------

    def _replica(self, session_id: str, principal: str | None, peer: str = "") -> SharedSession:
        session = SharedSession(
            session_id=session_id,
            principal=principal,
            peer=peer,
            mirror=self.mirror,
            max_buffered_bytes=self.options.max_buffered_bytes,
            client_request_timeout=self.options.client_request_timeout,
            process=self.process,
            total_budget=self.replicas.total_budget,
        )
        self.replicas.add(session)
        return session

    async def open(self, principal: str | None, peer: str) -> LegacySession | Refusal:
        """A new session, counted against `max_sessions` and `max_sessions_per_peer` across every
        process sharing the store. At `max_sessions`, one of this process's sessions with no
        client connected and nothing running is ended for it, as `LocalSessions` does."""
        session_id = self.options.session_id_prefix + uuid.uuid4().hex
        verdict = await self._reserve(session_id, peer)
        if verdict == "full":
            victim = self.replicas.victim(lambda session: not session.running)
            if victim is not None:
                logger.info("session cap reached across processes: ending session %s", victim.session_id)
                await self.end(victim)
                verdict = await self._reserve(session_id, peer)
        if verdict == "peer full":
            return peer_full(self.options)
        if verdict == "full":
            return Refusal(503, INTERNAL_ERROR, SHARED_FULL.format(self.options.max_sessions))
        self.replicas.make_room(self.sweep)  # this process's own table stays within the cap too
        return self._replica(session_id, principal, peer)

    async def _reserve(self, session_id: str, peer: str) -> Reservation:
        return await self.store.reserve(
            session_id,
            peer=peer,
            ttl=self.ttl,
            max_sessions=self.options.max_sessions,
            max_per_peer=self.options.max_sessions_per_peer,
        )

    def end_all(self) -> None:
        """End this process's replicas (the stored sessions live on)."""
        self.replicas.end_all()

    def sweep(self) -> None:
        """Forget replicas nobody used lately; refresh the expiry of sessions a client reads here.

        A replica that still runs a request stays while its session lives in the store.
        """
        deadline = anyio.current_time() - min(_LOCAL_KEEP, self.ttl)
        reading: list[LegacySession] = []
        running: list[LegacySession] = []
        for session in list(self.replicas.by_id.values()):
            if session.connected:
                reading.append(session)
            elif session.running:
                running.append(session)
            elif session.last_active < deadline:
                self.replicas.end_session(session)
        if (reading or running) and self._running is not None:
            self._running.task_group.start_soon(self._check_live, reading, running)

    async def _check_live(self, reading: list[LegacySession], running: list[LegacySession]) -> None:
        try:
            live = await self.store.touch([s.session_id for s in reading], ttl=self.ttl)
            live += await self.store.touch([s.session_id for s in running], ttl=None)
        except StoreUnavailable as error:
            logger.error("cannot check the shared sessions of this process: %s", error)
            return
        for session, alive in zip([*reading, *running], live, strict=True):
            if not alive and self.replicas.by_id.get(session.session_id) is session:
                logger.info(
                    "session %s ended elsewhere or expired: its replica here ends", session.session_id
                )
                self.replicas.end_session(session)

    async def attach(self, session_id: str) -> SharedSession | None:
        """The replica of a live session, up to date with its record; None (404) for any other."""
        record = await self.store.load(session_id, ttl=self.ttl)
        local = self.replicas.by_id.get(session_id)
        replica = local if isinstance(local, SharedSession) else None
        if record is None:
            if replica is not None and replica.record is None:
                return replica  # created here, its `initialize` still running
            if local is not None:
                self.replicas.end_session(local)
            return None
        if replica is None:
            self.replicas.make_room(self.sweep)
            replica = self._replica(session_id, None)
        if replica.record != record:
            replica.restore(record)
        return replica

    # -- requests -----------------------------------------------------------------------------

    async def end(self, session: LegacySession) -> None:
        """Remove the stored session, tell the other processes, end the replica here."""
        await self.store.delete(session.session_id)
        await self.store.publish({"op": "end", "session": session.session_id, "from": self.process})
        self.replicas.end_session(session)

    async def find_stream(self, session: LegacySession, last_event_id: str) -> tuple[EventStream, int] | None:
        """A stream of this process, or one another process wrote, read back from the store."""
        found = session.find_stream(last_event_id)
        if found is not None:
            return found
        match = EVENT_ID.fullmatch(last_event_id)
        if match is None:
            return None
        stream_id = match[1]
        key = _stream_key(session.session_id, stream_id)
        if not await self.store.events.exists(key):
            return None
        session.streams[stream_id] = StoredStream(stream_id, key, self.store.events)
        return session.find_stream(last_event_id)

    async def serve(
        self,
        running: Running,
        session: LegacySession,
        message: Mapping[str, Any] | Request,
        peer: Peer,
        *,
        on_wait: Callable[[anyio.CancelScope], None] | None = None,
        answer_late: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> dict[str, Any] | None:
        """Serve the message; store the session's record when it changed (before the answer leaves)."""
        handled = handle_safely(
            running, message, session.connection, peer, answer_late=answer_late, on_wait=on_wait, loop=loop
        )
        if not isinstance(session, SharedSession):
            return await handled
        before = session.state()
        response = await handled
        if session.state() != before and not session.ended:
            try:
                await self._store_record(session)
            except StoreUnavailable as error:
                if isinstance(message, Request):
                    return error_body(INTERNAL_ERROR, str(error), message.id)
                if "id" in message:
                    return error_body(INTERNAL_ERROR, str(error), message["id"])
                logger.error("the session %s could not be stored: %s", session.session_id, error)
        return response

    async def _store_record(self, session: SharedSession) -> None:
        """Create the record, or write the fields this process changed (not the whole record:
        another process may have changed others meanwhile, and those stay)."""
        if session.record is None:
            record = {**session.to_record(), "peer": session.peer}
            stored = await self.store.create(session.session_id, record, ttl=self.ttl)
        else:
            changes = session.changes()
            stored = await self.store.save(session.session_id, changes, ttl=self.ttl)
            record = {**session.record, **changes}
        if stored:
            session.record = record
        else:
            self.replicas.end_session(session)

    async def undelivered(self, session: LegacySession, message: Mapping[str, Any]) -> None:
        """Pass an answer to the process that asked (its id names it), a cancellation to every
        process (the one running the call stops it). Raises `StoreUnavailable` when the store
        cannot take it or the process that asked is gone: the client hears so at once."""
        note: dict[str, Any] = {"session": session.session_id, "message": dict(message), "from": self.process}
        if "method" in message:
            await self.store.publish(note | {"op": "cancel"})
            return
        asker = _asker(message.get("id"))
        if asker is None:
            return  # no process asked under that id
        if not await self.store.publish(note | {"op": "deliver", "to": asker}):
            raise StoreUnavailable(GONE)

    async def _tell_trimmed(self, trim: Trimmed) -> None:
        """Tell the process writing a stream that the session's budget dropped its oldest events."""
        session_id, _, stream_id = trim.key.rpartition(":")
        note = {"op": "trim", "to": trim.writer, "from": self.process, "session": session_id}
        try:
            await self.store.publish(note | {"stream": stream_id, "first": trim.first_kept})
        except StoreUnavailable as error:  # the store dropped them; only that process's copy stays
            logger.error("cannot tell the writer of SSE stream %s what was trimmed: %s", stream_id, error)

    async def _listen(self) -> None:
        async for note in self.store.listen(self.process):
            session = self.replicas.by_id.get(str(note.get("session")))
            if session is None or note.get("from") == self.process:
                continue
            operation = note.get("op")
            message: Any = note.get("message")
            if operation == "end":
                self.replicas.end_session(session)
            elif operation == "trim":
                first = note.get("first")
                key = _stream_key(session.session_id, str(note.get("stream")))
                if isinstance(first, int):
                    await self.mirror.drop(Trimmed(self.process, key, first))
            elif not isinstance(message, Mapping):
                continue
            elif operation == "deliver":
                session.deliver(cast("Mapping[str, Any]", message))
            elif operation == "cancel":
                params: Any = cast("Mapping[str, Any]", message).get("params")
                if isinstance(params, Mapping):
                    session.cancel(cast("Mapping[str, Any]", params).get("requestId"))
