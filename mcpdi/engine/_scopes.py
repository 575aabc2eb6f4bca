"""`AppScope`: the values of app-scoped resolvers, shared by every call, closed by their host."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Literal

from mcpdi.engine._cleanup import Entered, RoundOutcome, close

if TYPE_CHECKING:
    from anyio import Lock

Scope = Literal["round", "call", "app"]


class AppScope:
    """The cache of `Resolve(fn, scope="app")` values: each computed on first use, then shared.

    The host owns it: pass it to every round as a context value (`context={AppScope: scope}`)
    and `await scope.aclose()` at shutdown, which runs the cleanup of app-scoped generator and
    context-manager resolvers (last created first) and empties the cache; a later call computes
    the values afresh. `MCPServer` does both for its tools, prompts and resources.
    """

    __slots__ = ("_entered", "_functions", "_locks", "values")

    def __init__(self) -> None:
        self.values: dict[Hashable, Any] = {}  # by the resolver's identity
        self._functions: list[Any] = []  # keeps the resolvers alive, so that their ids stay theirs
        self._entered: list[Entered] = []
        self._locks: dict[Hashable, Lock] = {}

    def lock_for(self, key: Hashable) -> Lock:
        """One lock per value: concurrent first calls compute it once."""
        lock = self._locks.get(key)
        if lock is None:
            from anyio import Lock  # lazy: importing the engine must not import anyio

            lock = self._locks[key] = Lock()
        return lock

    def keep(self, key: Hashable, fn: Any, value: Any, entered: Entered | None) -> None:
        self.values[key] = value
        self._functions.append(fn)
        if entered is not None:
            self._entered.append(entered)

    async def aclose(self) -> None:
        """Clean up every app-scoped value (generators receive `RoundOutcome.COMPLETED`) and
        forget them all. A failing cleanup does not stop the others; the first is raised as
        `CleanupError` once all have run."""
        entered, self._entered = self._entered, []
        self.values.clear()
        self._functions.clear()
        self._locks.clear()
        await close(entered, None, RoundOutcome.COMPLETED)

    def __repr__(self) -> str:
        return f"<AppScope with {len(self.values)} values>"
