"""Single-use `requestState`: the store of state ids already accepted, in memory by default."""

from __future__ import annotations

import heapq
import logging
import sys
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Final, Protocol

from mcpdi._auth import get_access_token, principal_of
from mcpdi.lowlevel._context_value import ContextValue
from mcpdi.lowlevel._http_scope import current_http_scope

__all__ = ("DEFAULT_MAX_ENTRIES", "MemoryReplayStore", "ReplayStore", "current_peer", "from_address")

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
    ids expire) rather than forget a live id, which would let its token be replayed. So that
    one client cannot fill it for everyone, once it is three quarters full a claim by the
    peer holding half of its live ids or more is refused: the other peers keep the last
    quarter. A peer is the authenticated principal, else the address a transport names
    (`from_address`); the peers behind one proxy without auth are one peer.
    """

    __slots__ = ("_clock", "_expires", "_expiry_order", "_held", "_lock", "max_entries")

    def __init__(
        self, *, max_entries: int = DEFAULT_MAX_ENTRIES, clock: Callable[[], float] = time.time
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            msg = f"MemoryReplayStore max_entries must be a positive int, not {max_entries!r}"
            raise ValueError(msg)
        self.max_entries = max_entries
        self._clock = clock
        self._expires: dict[str, tuple[float, str]] = {}  # id -> (expiry, peer)
        self._expiry_order: list[tuple[float, str]] = []
        self._held: dict[str, int] = {}  # peer -> live ids
        # Claims never await, so one event loop needs no lock; the lock covers servers run in threads.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._expires)

    async def claim(self, state_id: str, expires_at: float) -> bool:
        return self._claim_now(state_id, expires_at)

    def _claim_now(self, state_id: str, expires_at: float) -> bool:
        """`claim` without the coroutine: True the first time `state_id` is seen while live."""
        peer = sys.intern(current_peer())  # one string per peer, however many ids it holds
        with self._lock:
            now = self._clock()
            self._drop_expired(now)
            if state_id in self._expires:
                return False
            live = len(self._expires)
            if live >= self.max_entries:
                logger.warning(
                    "requestState replay store is full (%d live ids); refusing a round. Raise "
                    "MemoryReplayStore(max_entries=...) or plug in a shared store",
                    self.max_entries,
                )
                return False
            held = self._held.get(peer, 0)
            if 4 * live >= 3 * self.max_entries and 2 * held >= live:
                logger.warning(
                    "requestState replay store: refusing a round of %s, which holds %d of its %d live ids",
                    peer,
                    held,
                    live,
                )
                return False
            self._expires[state_id] = (expires_at, peer)
            self._held[peer] = held + 1
            heapq.heappush(self._expiry_order, (expires_at, state_id))
            return True

    def _drop_expired(self, now: float) -> None:
        order = self._expiry_order
        while order and order[0][0] <= now:
            _, state_id = heapq.heappop(order)
            dropped = self._expires.pop(state_id, None)
            if dropped is not None:
                peer = dropped[1]
                left = self._held[peer] - 1
                if left:
                    self._held[peer] = left
                else:
                    del self._held[peer]


_ADDRESS: ContextVar[str | None] = ContextVar("mcpdi_peer_address", default=None)


def from_address(address: str | None) -> ContextValue[str | None]:
    """Run a request's handling as coming from `address` (for transports: the client's address),
    the peer a `MemoryReplayStore` counts it to when the caller is not authenticated: `with` it.

    An HTTP transport need not: a request served in `serving_http_request` comes from its
    scope's `client` unless an address is set here.
    """
    return ContextValue(_ADDRESS, address)


def current_peer() -> str:
    """Who is claiming: the authenticated principal, else the transport's address, else "local"."""
    principal = principal_of(get_access_token())
    if principal is not None:
        return f"principal {principal}"
    address = _ADDRESS.get()
    if address is None:
        address = _http_client_address()
    return "local" if address is None else f"address {address}"


def _http_client_address() -> str | None:
    """The host of the HTTP request being served (its ASGI scope's `client`), if any."""
    scope = current_http_scope()
    client = None if scope is None else scope.get("client")
    return None if client is None else str(client[0])
