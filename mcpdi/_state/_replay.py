"""Single-use `requestState`: the store of state ids already accepted, in memory by default."""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ("DEFAULT_MAX_ENTRIES", "MemoryReplayStore", "ReplayStore")

logger = logging.getLogger("mcpdi")

DEFAULT_MAX_ENTRIES: Final = 100_000


class ReplayStore(Protocol):
    """Where the ids of accepted `requestState` tokens are kept until they expire.

    `claim` is one atomic check-and-set with a time to live: of any number of concurrent claims
    of one id, exactly one returns True, and the id stays claimed until `expires_at` (seconds
    since the epoch), after which the token is refused as expired anyway. A store shared by
    several processes (Redis: `SET id 1 NX PXAT expires_at_ms`) makes a round single-use
    across all of them. An exception refuses the token (the server fails closed); a
    `ConnectionError` (the store is unreachable) is answered with -32603 and leaves the token
    unspent, so the same round succeeds once the store is back.
    """

    async def claim(self, state_id: str, expires_at: float) -> bool: ...


class MemoryReplayStore:
    """The ids of one process, dropped when they expire, at most `max_entries` at a time.

    When it is full of live ids, new claims fail (the rounds of new calls are refused until
    ids expire) rather than forget a live id, which would let its token be replayed.
    """

    __slots__ = ("_clock", "_expires", "_expiry_order", "_lock", "max_entries")

    def __init__(
        self, *, max_entries: int = DEFAULT_MAX_ENTRIES, clock: Callable[[], float] = time.time
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            msg = f"MemoryReplayStore max_entries must be a positive int, not {max_entries!r}"
            raise ValueError(msg)
        self.max_entries = max_entries
        self._clock = clock
        self._expires: dict[str, float] = {}
        self._expiry_order: list[tuple[float, str]] = []
        # Claims never await, so one event loop needs no lock; the lock covers servers run in threads.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._expires)

    async def claim(self, state_id: str, expires_at: float) -> bool:
        return self._claim_now(state_id, expires_at)

    def _claim_now(self, state_id: str, expires_at: float) -> bool:
        """`claim` without the coroutine: True the first time `state_id` is seen while live."""
        with self._lock:
            now = self._clock()
            self._drop_expired(now)
            if state_id in self._expires:
                return False
            if len(self._expires) >= self.max_entries:
                logger.warning(
                    "requestState replay store is full (%d live ids); refusing a round. Raise "
                    "MemoryReplayStore(max_entries=...) or plug in a shared store",
                    self.max_entries,
                )
                return False
            self._expires[state_id] = expires_at
            heapq.heappush(self._expiry_order, (expires_at, state_id))
            return True

    def _drop_expired(self, now: float) -> None:
        order = self._expiry_order
        while order and order[0][0] <= now:
            _, state_id = heapq.heappop(order)
            self._expires.pop(state_id, None)
