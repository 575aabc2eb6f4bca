"""`ContextValue`: a context variable set for the length of a `with` block."""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Generic, TypeVar

__all__ = ("ContextValue",)

T = TypeVar("T")


class ContextValue(Generic[T]):
    """Sets `var` to `value` on entering the `with` block, and back on leaving it.

    What a `@contextmanager` generator doing `set`/`reset` does, at less than half its
    cost: a transport enters a few of these on every request.
    """

    __slots__ = ("_reset", "_value", "_var")

    def __init__(self, var: ContextVar[T], value: T) -> None:
        self._var = var
        self._value = value
        self._reset: Token[T] | None = None

    def __enter__(self) -> None:
        self._reset = self._var.set(self._value)

    def __exit__(self, *exc_info: object) -> None:
        reset = self._reset
        if reset is not None:
            self._reset = None
            self._var.reset(reset)
