"""`Ticker`: the many short-lived deadlines of one event loop on one timer, armed while any is set."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

__all__ = ("Ticker",)

logger = logging.getLogger("mcpdi_transport")


class Ticker:
    """Calls each added callback once `delay` seconds have passed, checked every `resolution` seconds.

    A deadline per request that arms and cancels a loop timer of its own costs the loop a
    heap entry and its upkeep per request, at thousands of requests per second more than
    the deadline is worth. Here adding and discarding one is a dict operation; the loop's
    timer ticks while any deadline is set and stops at the first tick with none. A callback
    runs between `delay` and `delay + resolution` seconds after it was added. Every entry
    has the same delay, so the entries are in the order they fall due.
    """

    __slots__ = ("_entries", "_handle", "_next_key", "delay", "loop", "resolution")

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float, resolution: float) -> None:
        self.loop = loop
        self.delay = delay
        self.resolution = resolution
        self._entries: dict[int, tuple[float, Callable[[], None]]] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._next_key = 0

    def add(self, callback: Callable[[], None]) -> int:
        """Call `callback` once `delay` has passed, unless `discard`ed first; returns its key."""
        key = self._next_key
        self._next_key = key + 1
        self._entries[key] = (self.loop.time() + self.delay, callback)
        if self._handle is None:
            self._handle = self.loop.call_later(self.resolution, self._tick)
        return key

    def discard(self, key: int) -> None:
        self._entries.pop(key, None)

    def _tick(self) -> None:
        now = self.loop.time()
        due: list[tuple[int, Callable[[], None]]] = []
        for key, (when, callback) in self._entries.items():
            if when > now:
                break
            due.append((key, callback))
        for key, _ in due:
            del self._entries[key]
        for _, callback in due:
            try:
                callback()
            except Exception:
                logger.exception("a deadline's callback failed")
        self._handle = self.loop.call_later(self.resolution, self._tick) if self._entries else None
