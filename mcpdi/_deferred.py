"""Values registration leaves for the first list or call, built once on first use.

`Deferred` is one such value as an object of its own; `built_once` keeps one in a slot of a
record that is alive anyway, which saves an object (and its arguments) per registered entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, TypeVarTuple, cast

__all__ = ("UNBUILT", "Deferred", "built_once")

T = TypeVar("T")
V = TypeVar("V")
R = TypeVar("R")
Ts = TypeVarTuple("Ts")

_UNSET: object = object()
UNBUILT: Any = _UNSET  # what a `built_once` slot holds until its value is built

# One lock for every deferred value: builds are rare (once per value), short and may nest (a
# tool's `Tool` object reads its deferred schemas), so a shared re-entrant lock costs nothing
# per tool and still makes concurrent first uses build once.
_BUILDING = threading.RLock()


class Deferred(Generic[T]):
    """`build(*args)` run on the first `get()` (once, even when threads race), its result kept.

    An exception from `build` propagates to that caller and the next `get()` tries again.
    The arguments are kept as given rather than in a `partial`: every registered entry keeps
    a few deferred values until first use, and each object they hold is one more for every
    garbage collection to visit while the server lives.
    """

    __slots__ = ("_args", "_build", "_spread", "_value")

    def __init__(self, build: Callable[[*Ts], T], *args: *Ts) -> None:
        self._build: Callable[..., T] | None = build
        self._args: Any = args
        self._spread = True  # `_args` is the tuple of arguments, not the one argument itself
        self._value: object = _UNSET

    @staticmethod
    def of(build: Callable[[V], R], argument: V) -> Deferred[R]:
        """`build(argument)` on the first `get()`, the argument kept as it is (no tuple around it)."""
        deferred = cast("Deferred[R]", Deferred.__new__(Deferred))
        deferred._build = build
        deferred._args = argument
        deferred._spread = False
        deferred._value = _UNSET
        return deferred

    @staticmethod
    def ready(value: V) -> Deferred[V]:
        """A value decided at registration, behind the same interface."""
        deferred = cast("Deferred[V]", Deferred.__new__(Deferred))
        deferred._build = None
        deferred._args = ()
        deferred._spread = True
        deferred._value = value
        return deferred

    @property
    def built(self) -> bool:
        return self._value is not _UNSET

    def get(self) -> T:
        value = self._value
        if value is _UNSET:
            with _BUILDING:
                if self._value is _UNSET:
                    assert self._build is not None
                    self._value = self._build(*self._args) if self._spread else self._build(self._args)
                    self._build, self._args = None, ()  # let go of what the build needed
                value = self._value
        return cast("T", value)


def built_once(record: object, slot: str, build: Callable[[], T]) -> T:
    """The value in `record`'s `slot` (`UNBUILT` until then), `build()` on first use, once even
    when threads race; stored past the record's frozenness, as a cache of what it decided.

    An exception from `build` propagates to that caller and the next use tries again.
    """
    value = getattr(record, slot)
    if value is _UNSET:
        with _BUILDING:
            value = getattr(record, slot)
            if value is _UNSET:
                value = build()
                object.__setattr__(record, slot, value)
    return cast("T", value)
