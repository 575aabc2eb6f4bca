"""Awaiting by hand: an awaitable's first step, and the rest of it only when it has to wait.

Some per-request guards (a deadline, say) matter only while an await waits on the event loop.
Most awaits of a request's hot path finish without waiting (a body already buffered by the
server), and then no guard could have fired: the first step tells which case it is before
the guard is paid for.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

__all__ = ("Waiting", "first_step", "rest_of")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Waiting(Generic[T]):
    """An await begun by hand that waits: `pending` is what it handed the event loop to wait on."""

    steps: Generator[Any, Any, T]
    pending: Any


def first_step(awaitable: Awaitable[T]) -> T | Waiting[T]:
    """What `awaitable` gives if it finishes without waiting, else a `Waiting` for `rest_of`.

    Await the `Waiting` with `rest_of` right away, in the same task: until then, the event
    loop holds nothing for it. An exception from the first step is raised here.
    """
    steps: Any = awaitable
    try:
        if type(awaitable) is types.CoroutineType:  # an `async def`'s: the commonest, stepped as it is
            pending = steps.send(None)
        else:
            if not isinstance(steps, types.GeneratorType):  # a `types.coroutine` one has no `__await__`
                steps = awaitable.__await__()
            pending = _advance(steps, None)
    except StopIteration as done:
        return done.value
    return Waiting(cast("Generator[Any, Any, T]", steps), pending)


def _advance(steps: Any, sent: Any) -> Any:
    """One step, as `await` takes it: `send` where the iterator has one (a coroutine has no
    `__next__`), else `__next__` (all a plain iterator has; `await` sends it nothing else)."""
    send = getattr(steps, "send", None)
    return next(steps) if send is None else send(sent)


@types.coroutine
def rest_of(waiting: Waiting[T]) -> Generator[Any, Any, T]:
    """The rest of an await begun with `first_step`, as awaiting it whole would have gone on."""
    steps, value = waiting.steps, waiting.pending
    while True:
        thrown: BaseException | None = None
        sent: Any = None
        try:
            sent = yield value
        except GeneratorExit:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as error:  # what the task throws in (a cancellation): the await's to handle
            thrown = error
        throw = getattr(steps, "throw", None) if thrown is not None else None
        if thrown is not None and throw is None:
            raise thrown  # an iterator without `throw` is left, as `await` leaves it
        try:
            value = _advance(steps, sent) if throw is None else throw(thrown)
        except StopIteration as done:
            return cast("T", done.value)
