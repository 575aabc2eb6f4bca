"""Running the independent async resolvers of one round together (`Resolve(fn, concurrent=True)`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from mcpdi.engine._errors import ResolverError
from mcpdi.engine._plan import Binding, Step

Call = tuple[Step, list[Any], dict[str, Any]]  # a step, and the arguments it is called with


def batch_from(
    steps: Sequence[Step],
    start: int,
    values: Sequence[Any],
    blocked: Collection[int],
    unset: Any,
    pending: bool,
) -> list[Step]:
    """`steps[start]` and the steps right after it in run order that can run at the same time.

    Each is marked concurrent, has not run, is not blocked by a pending question, and uses
    none of the others. A step that cannot ask joins only while no question can be pending
    before it: none is pending yet and no earlier member may ask.
    """
    first = steps[start]
    batch = [first]
    members = {start}
    asking = pending or first.may_ask
    for step in steps[start + 1 :]:
        if not step.concurrent or values[step.index] is not unset or (asking and not step.may_ask):
            break
        providers = {edge.provider.index for edge in step.edges}
        if providers & members or providers & set(blocked):
            break
        batch.append(step)
        asking = asking or step.may_ask
        members.add(step.index)
    return batch


async def run_together(
    batch: list[Step],
    arguments_of: Callable[[tuple[Binding, ...]], tuple[list[Any], dict[str, Any]]],
    resolver_error: Callable[[Step, Exception], ResolverError],
) -> dict[int, Any]:
    """Values of the batch by step index, as `run_calls` gives them."""
    calls = [(step, *arguments_of(step.bindings)) for step in batch]  # adapters: before any runs
    values = await run_calls(calls, resolver_error)
    return {step.index: value for step, value in zip(batch, values, strict=True)}


async def run_calls(
    calls: Sequence[Call], resolver_error: Callable[[Step, Exception], ResolverError]
) -> list[Any]:
    """The values of the calls, in their order; every call runs to its end.

    The arguments are computed (adapted) before: the interpreter and the generated code both
    come here with them. With failures, the first in run order is raised as `ResolverError`
    and the others are noted on it.
    """
    from anyio import create_task_group  # lazy: importing the engine must not import anyio

    results: list[Any] = [None] * len(calls)
    failures: dict[int, tuple[Step, Exception]] = {}

    async def one(at: int, step: Step, args: list[Any], kwargs: dict[str, Any]) -> None:
        try:
            results[at] = await step.fn(*args, **kwargs)
        except Exception as error:
            failures[at] = (step, error)

    async with create_task_group() as group:
        for at, (step, args, kwargs) in enumerate(calls):
            group.start_soon(one, at, step, args, kwargs)
    if failures:
        ordered = [failures[at] for at in sorted(failures)]
        step, first = ordered[0]
        error = resolver_error(step, first)
        for other, raised in ordered[1:]:
            kind = type(raised).__name__
            error.add_note(f"Resolver {other.name!r}, run at the same time, also raised {kind}: {raised}")
        raise error from first
    return results
