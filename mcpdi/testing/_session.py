"""A server's in-memory runner, entered on first use and kept open: its lifespan runs once.

Tests call a server many times; entering the lifespan per call would lose what it opened (a
`:memory:` database) and cost a runner per call. The session is bound to the event loop that
entered it: a test framework that gives each test a fresh loop gets a fresh lifespan.
"""

from __future__ import annotations

import itertools
import json
import weakref
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from mcpdi.lowlevel._connection import Connection
from mcpdi.lowlevel._runner import Runner
from mcpdi.testing._memory import InMemoryClient, Script

__all__ = ("MemorySession", "session_of")


class Runnable(Protocol):
    def running(self) -> AbstractAsyncContextManager[Runner[Any]]: ...


class MemorySession:
    """One server's kept-open runner; `aclose()` leaves the lifespan."""

    def __init__(self, server: Runnable) -> None:
        self._server = server
        self._stack: AsyncExitStack | None = None
        self._runner: Runner[Any] | None = None
        self._loop: anyio.lowlevel.EventLoopToken | None = None
        self._lock: anyio.Lock | None = None
        self._streams: dict[tuple[str, str], Connection] = {}
        self._ids = itertools.count(1)

    @property
    def open(self) -> bool:
        return self._runner is not None

    async def runner(self) -> Runner[Any]:
        """The open runner, entering the lifespan when none is open on this event loop."""
        loop = anyio.lowlevel.current_token()
        runner = self._runner
        if runner is not None and self._loop == loop:
            return runner
        if self._lock is None or self._loop != loop:
            # The runner of a finished loop cannot be left on this one; it is dropped.
            self._forget()
            self._loop = loop
            self._lock = anyio.Lock()
        async with self._lock:
            if self._runner is None:
                stack = AsyncExitStack()
                self._runner = await stack.enter_async_context(self._server.running())
                self._stack = stack
            return self._runner

    async def client(
        self,
        *,
        protocol_version: str,
        capabilities: Mapping[str, Any],
        script: Script | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> InMemoryClient:
        """A client of the open runner; handshake-era clients share one initialized stream."""
        runner = await self.runner()
        key = (protocol_version, json.dumps(capabilities, sort_keys=True, default=str))
        stream = self._streams.get(key)
        client = InMemoryClient(
            runner,
            protocol_version=protocol_version,
            capabilities=capabilities,
            script=script,
            headers=headers,
            stream=stream,
            ids=self._ids,
        )
        if stream is None and not client.modern:
            self._streams[key] = await client.connection()
        return client

    async def aclose(self) -> None:
        """Leave the lifespan (its cleanup runs now); the next use enters it again."""
        stack = self._stack
        self._forget()
        if stack is not None:
            await stack.aclose()

    def _forget(self) -> None:
        self._stack = None
        self._runner = None
        self._streams = {}


_SESSIONS: weakref.WeakKeyDictionary[Any, MemorySession] = weakref.WeakKeyDictionary()


def session_of(server: Runnable) -> MemorySession:
    """The in-memory session of `server` (one per server object)."""
    session = _SESSIONS.get(server)
    if session is None:
        session = _SESSIONS[server] = MemorySession(server)
    return session
