"""A request's cancel scope, entered only once its handler waits on something (asyncio).

Most requests are answered without their handler waiting once: run in one step, nothing
can cancel them (no other task runs meanwhile), so entering and leaving an anyio
`CancelScope` for them (about 2 µs each here) buys nothing. `LateScope` runs the handler's
first step outside the scope. An answer there is the answer. A handler that waits gets the
scope from then on, and is awaited from where it stopped (`resumed`): the scope is entered
where it would have been had it been entered first, around whatever scopes the handler
entered in its first step (a task group, a timeout, a thread hop), so a cancel reaches
the handler and every scope it holds, a shield still shields, and the scopes exit in order.

Placing the scope under those the handler already holds takes anyio's asyncio backend's
own bookkeeping (which scope a task is in, and each scope's parent and children): when
that is not the one this module knows, on trio, or with a scope kind it did not make,
`scope_before` gives `EARLY` and the scope is entered before the handler, as usual.
"""

from __future__ import annotations

import asyncio
import types
from asyncio import current_task as _current_task
from collections.abc import Coroutine, Generator
from typing import Any, Final, TypeVar, cast

import anyio

__all__ = ("EARLY", "LateScope", "resumed", "scope_before")

_T = TypeVar("_T")

try:
    from anyio._backends import _asyncio as _backend  # pyright: ignore[reportPrivateUsage]

    _BackendScope: type[Any] | None = _backend.CancelScope
    _task_states: Any = getattr(_backend, "_task_states")  # noqa: B009 - private: read once, untyped
    _state_slots: frozenset[str] = frozenset(getattr(_backend.TaskState, "__slots__", ()))
except (ImportError, AttributeError):  # pragma: no cover - an anyio without this backend layout
    _BackendScope = None
    _task_states = None
    _state_slots = frozenset()

_KNOWN_SLOTS: Final = frozenset({"_parent_scope", "_child_scopes", "_tasks", "_host_task", "_active"})

KNOWN_LAYOUT: Final = (
    _BackendScope is not None
    and callable(getattr(_task_states, "get", None))
    and "cancel_scope" in _state_slots
    and set(getattr(_BackendScope, "__slots__", ())) >= _KNOWN_SLOTS
)
"""Whether the installed anyio keeps its asyncio scopes as this module expects (tested to hold)."""


def _current(state: Any) -> Any:
    return None if state is None else state.cancel_scope


EARLY: Final = object()
"""What `scope_before` gives when the scope is to be entered before the handler runs."""


def scope_before(kind: type[anyio.CancelScope], loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """The anyio scope the current task is in, before a handler's first step; `EARLY`: enter first.

    `kind` is the kind of scope the handler is to run in. Late entry needs asyncio, a scope
    of its backend's own kind, and the bookkeeping this module knows (`KNOWN_LAYOUT`).
    `loop`: the running loop, when the caller has it (else it is asked for).
    """
    if kind is not _BackendScope or not KNOWN_LAYOUT:
        return EARLY
    task = _current_task(loop)
    return EARLY if task is None else _current(_task_states.get(task))


class LateScope:
    """Enters `scope` late, under `before`: the scope `task` was in when `scope_before` was asked."""

    __slots__ = ("_before", "_scope", "_task")

    def __init__(self, scope: anyio.CancelScope, before: Any) -> None:
        self._scope = scope
        self._task = _current_task()
        self._before = before

    def __enter__(self) -> anyio.CancelScope:
        scope, task, before = self._scope, self._task, self._before
        state = _task_states.get(task)
        now = _current(state)
        if now is before:  # the handler waits outside any scope of its own: an ordinary entry
            return scope.__enter__()
        # It waits inside scopes it entered itself: `scope` goes between `before` and the
        # outermost of them, as if it had been entered first.
        outermost = now
        while outermost is not None and outermost._parent_scope is not before:
            outermost = outermost._parent_scope
        if outermost is None:
            msg = "a handler left a cancel scope it did not enter"
            raise RuntimeError(msg)
        state.cancel_scope = before
        try:
            scope.__enter__()
        finally:
            state.cancel_scope = now
        late = cast("Any", scope)
        late._tasks.discard(task)  # the task is in the innermost scope, which holds it
        if before is not None:
            before._child_scopes.discard(outermost)
        late._child_scopes.add(outermost)
        outermost._parent_scope = scope
        return scope

    def __exit__(self, *exc_info: Any) -> bool:
        return bool(self._scope.__exit__(*exc_info))


@types.coroutine
def resumed(coroutine: Coroutine[Any, Any, _T], waiting_on: Any) -> Generator[Any, Any, _T]:
    """The rest of `await coroutine` once its first step has run and left it waiting on `waiting_on`.

    What the coroutine waits on goes to the event loop; what the loop sends or throws back
    (a cancellation) goes to the coroutine, as `yield from` would pass it.
    """
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as error:
            try:
                waiting_on = coroutine.throw(error)
            except StopIteration as done:
                return cast("_T", done.value)
        else:
            try:
                waiting_on = coroutine.send(sent)
            except StopIteration as done:
                return cast("_T", done.value)
