"""Cleanup resolvers: entering a generator or context manager, and closing them when a round ends."""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from mcpdi.engine._errors import CleanupError
from mcpdi.engine._plan import Step

logger = logging.getLogger("mcpdi.engine")

RunSync = Callable[..., Awaitable[Any]]  # runs a blocking call: on a worker thread, or inline


class RoundOutcome(enum.Enum):
    """How a round ended, sent to a generator resolver at its `yield` (`outcome = yield value`).

    A round that failed (the body or another resolver raised, or the call was cancelled) throws
    its exception in at the `yield` instead, so `try/except/finally` around it sees the error.
    """

    COMPLETED = "completed"  # the body ran and returned (or `plan.resolve` collected the values)
    SUSPENDED = "suspended"  # the round ended with questions; a later round runs the resolver again


class Entered(NamedTuple):  # a tuple: built once per cleanup resolver and round, at a tuple's cost
    """A cleanup resolver that produced its value: what must run when the round ends."""

    step: Step
    handle: Any  # the generator, async generator or context manager
    run_sync: RunSync


class _Stopped:
    """`next()` of a generator that returned without yielding (StopIteration cannot cross a thread)."""


STOPPED = _Stopped()


def _first(generator: Any) -> Any:
    try:
        return next(generator)
    except StopIteration:
        return STOPPED


async def enter(
    step: Step, args: list[Any], kwargs: dict[str, Any], run_sync: RunSync
) -> tuple[Any, Entered]:
    """Run a cleanup resolver up to its value: the value to inject, and what closes it later."""
    handle = step.fn(*args, **kwargs)  # creates the generator or context manager; runs no user code
    kind = step.cleanup
    if kind == "async_generator":
        try:
            value = await handle.__anext__()
        except StopAsyncIteration:
            value = STOPPED
    elif kind == "generator":
        value = await run_sync(_first, handle)
    elif kind == "async_context_manager":
        value = await handle.__aenter__()
    else:
        value = await run_sync(handle.__enter__)
    if value is STOPPED:
        raise never_yielded(step)
    return value, Entered(step, handle, run_sync)


def never_yielded(step: Step) -> RuntimeError:
    msg = (
        f"Resolver {step.name!r} ({step.location}) returned without yielding a value; a "
        "cleanup resolver yields the value to inject once, and cleans up after the yield."
    )
    return RuntimeError(msg)


async def run_inline(fn: Callable[..., Any], *args: Any) -> Any:
    """An inline cleanup resolver's blocking parts run on the event-loop thread."""
    return fn(*args)


def entered_of(steps: tuple[Step, ...], handles: tuple[Any, ...], run_sync: RunSync) -> list[Entered]:
    """The cleanup resolvers the generated code entered, in the order it entered them.

    `handles[i]` belongs to `steps[i]`: None when not entered, an async generator's own handle
    (the generated code enters those itself), else the `Entered` that `enter` gave.
    """
    return [
        Entered(step, handle, run_sync) if step.cleanup == "async_generator" else handle
        for step, handle in zip(steps, handles, strict=True)
        if handle is not None
    ]


def _yielded_twice(step: Step) -> RuntimeError:
    msg = (
        f"Resolver {step.name!r} ({step.location}) yielded a second time while cleaning up; a "
        "cleanup resolver yields once, its value. Put the cleanup after that one yield."
    )
    return RuntimeError(msg)


def _finish_generator(generator: Any, error: BaseException | None, outcome: RoundOutcome) -> bool:
    """Resume after the `yield`; False when it yielded again. Re-raising `error` is a clean finish."""
    try:
        if error is None:
            generator.send(outcome)
        else:
            generator.throw(error)
    except StopIteration:
        return True
    except BaseException as raised:
        if raised is error:
            return True
        raise
    generator.close()
    return False


async def _finish_async_generator(generator: Any, error: BaseException | None, outcome: RoundOutcome) -> bool:
    try:
        if error is None:
            await generator.asend(outcome)
        else:
            await generator.athrow(error)
    except StopAsyncIteration:
        return True
    except BaseException as raised:
        if raised is error:
            return True
        raise
    await generator.aclose()
    return False


def _exit_info(error: BaseException | None) -> tuple[Any, Any, Any]:
    return (None, None, None) if error is None else (type(error), error, error.__traceback__)


def _exit(manager: Any, error: BaseException | None) -> None:
    try:
        manager.__exit__(*_exit_info(error))  # a True return (suppress) is not honoured: see close()
    except BaseException as raised:
        if raised is not error:
            raise


async def _aexit(manager: Any, error: BaseException | None) -> None:
    try:
        await manager.__aexit__(*_exit_info(error))
    except BaseException as raised:
        if raised is not error:
            raise


async def close_one(item: Entered, error: BaseException | None, outcome: RoundOutcome) -> None:
    """Run one cleanup: resume the generator after its `yield`, or exit the context manager."""
    kind = item.step.cleanup
    if kind == "async_generator":
        finished = await _finish_async_generator(item.handle, error, outcome)
    elif kind == "generator":
        finished = await item.run_sync(_finish_generator, item.handle, error, outcome)
    elif kind == "async_context_manager":
        finished = True
        await _aexit(item.handle, error)
    else:
        finished = True
        await item.run_sync(_exit, item.handle, error)
    if not finished:
        raise _yielded_twice(item.step)


Failures = list[tuple[Step, Exception]] | None  # the cleanups that failed so far, in closing order


async def close(entered: list[Entered], error: BaseException | None, outcome: RoundOutcome) -> None:
    """Run every cleanup, last entered first; one failing does not stop the others.

    Each failure is logged. After a failed round (`error`) the failures are noted on that
    error, which the caller re-raises: cleanup cannot hide or replace why the round failed.
    After a completed or suspended round the first failure is raised as `CleanupError`.
    """
    failures: Failures = None
    for item in reversed(entered):
        try:
            await close_one(item, error, outcome)
        except Exception as failure:
            failures = failed(failures, item.step, failure)
    if failures is None:
        return
    if error is not None:
        for step, failure in failures:
            error.add_note(
                f"Cleanup of resolver {step.name!r} also failed: {type(failure).__name__}: {failure}"
            )
        return
    raise cleanup_error(failures) from failures[0][1]


def failed(failures: Failures, step: Step, failure: Exception) -> list[tuple[Step, Exception]]:
    """Log a cleanup's failure and add it to the failures so far (a list made on the first)."""
    logger.error("Cleanup of resolver %r failed", step.name, exc_info=failure)
    if failures is None:
        failures = []
    failures.append((step, failure))
    return failures


def cleanup_error(failures: list[tuple[Step, Exception]]) -> CleanupError:
    """The error of a completed or suspended round whose cleanups failed: the first failure's."""
    step, first = failures[0]
    msg = (
        f"Cleanup of resolver {step.name!r} (for parameter {step.first_consumer!r}) raised "
        f"{type(first).__name__}: {first}"
    )
    return CleanupError(msg, step=step, parameter=step.first_consumer, errors=tuple(f for _, f in failures))


async def yielded_again(failures: Failures, step: Step, generator: Any) -> list[tuple[Step, Exception]]:
    """An async generator resumed after its `yield` yielded again: closed, and failed as `close` fails it."""
    try:
        await generator.aclose()
        raise _yielded_twice(step)
    except Exception as failure:
        return failed(failures, step, failure)


async def close_shielded(entered: list[Entered], error: BaseException) -> None:
    """Close after a cancellation: shielded, so that async cleanup can still await."""
    from anyio import CancelScope  # lazy: importing the engine must not import anyio

    with CancelScope(shield=True):
        await close(entered, error, RoundOutcome.COMPLETED)
