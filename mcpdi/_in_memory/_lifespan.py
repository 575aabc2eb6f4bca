"""A server's in-memory runner, entered on first use and kept open: its lifespan runs once.

Tests call a server many times; entering the lifespan per call would lose what it opened (a
`:memory:` database) and cost a runner per call. The session is bound to the event loop that
entered it: a test framework that gives each test a fresh loop gets a fresh lifespan.

On asyncio the lifespan is held by a task of its own, so that it is entered and left in one
task (its task groups and cancel scopes stay valid), and a loop that ends without `aclose()`
cancels that task, which runs the lifespan's cleanup instead of abandoning it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import weakref
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from mcpdi._in_memory._client import InMemoryClient, Script
from mcpdi.lowlevel._connection import Connection
from mcpdi.lowlevel._runner import Runner

__all__ = ("MemorySession", "session_of")


class Runnable(Protocol):
    def running(self) -> AbstractAsyncContextManager[Runner[Any]]: ...


class MemorySession:
    """One server's kept-open runner; `aclose()` leaves the lifespan."""

    def __init__(self, server: Runnable) -> None:
        self._server = server
        self._holder: _TaskHolder | _StackHolder | None = None
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
                holder = _TaskHolder() if _on_asyncio() else _StackHolder()
                self._runner = await holder.enter(self._server)
                self._holder = holder
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
        holder = self._holder
        self._forget()
        if holder is not None:
            await holder.aclose()

    def _forget(self) -> None:
        self._holder = None
        self._runner = None
        self._streams = {}


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _StackHolder:
    """Holds the lifespan in the caller's task (event loops other than asyncio)."""

    def __init__(self) -> None:
        self._stack = AsyncExitStack()

    async def enter(self, server: Runnable) -> Runner[Any]:
        return await self._stack.enter_async_context(server.running())

    async def aclose(self) -> None:
        await self._stack.aclose()


class _TaskHolder:
    """Holds the lifespan in a task of its own until `aclose()` or the loop's end."""

    def __init__(self) -> None:
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def enter(self, server: Runnable) -> Runner[Any]:
        ready: asyncio.Future[Runner[Any]] = asyncio.get_running_loop().create_future()

        async def hold() -> None:
            try:
                async with server.running() as runner:
                    ready.set_result(runner)
                    await self._stop.wait()
            except Exception as error:
                if ready.done():
                    raise
                ready.set_exception(error)  # the lifespan failed to start: the caller raises it

        self._task = asyncio.get_running_loop().create_task(hold(), name="mcpdi in-memory lifespan")
        return await ready

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task


_SESSIONS: weakref.WeakKeyDictionary[Any, MemorySession] = weakref.WeakKeyDictionary()


def session_of(server: Runnable) -> MemorySession:
    """The in-memory session of `server` (one per server object)."""
    session = _SESSIONS.get(server)
    if session is None:
        session = _SESSIONS[server] = MemorySession(server)
    return session
