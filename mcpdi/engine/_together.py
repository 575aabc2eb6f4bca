"""Running the independent async resolvers of one round together (`Resolve(fn, concurrent=True)`)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from mcpdi.engine._errors import ResolverError
from mcpdi.engine._plan import Binding, Plan, Step


def batch_from(
    plan: Plan, start: int, values: list[Any], blocked: Collection[int], unset: Any, pending: bool
) -> list[Step]:
    """`start` and the steps right after it in run order that can run at the same time.

    Each is marked concurrent, has not run, is not blocked by a pending question, and uses
    none of the others. A step that cannot ask joins only while no question can be pending
    before it: none is pending yet and no earlier member may ask.
    """
    first = plan.steps[start]
    batch = [first]
    members = {start}
    asking = pending or first.may_ask
    for step in plan.steps[start + 1 :]:
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
    """Values of the batch by step index; every member runs to its end.

    With failures, the first in run order is raised as `ResolverError` and the others are
    noted on it.
    """
    from anyio import create_task_group  # lazy: importing the engine must not import anyio

    calls = [(step, *arguments_of(step.bindings)) for step in batch]  # adapters: before any runs
    results: dict[int, Any] = {}
    failures: dict[int, tuple[Step, Exception]] = {}

    async def one(step: Step, args: list[Any], kwargs: dict[str, Any]) -> None:
        try:
            results[step.index] = await step.fn(*args, **kwargs)
        except Exception as error:
            failures[step.index] = (step, error)

    async with create_task_group() as group:
        for step, args, kwargs in calls:
            group.start_soon(one, step, args, kwargs)
    if failures:
        ordered = [failures[index] for index in sorted(failures)]
        step, first = ordered[0]
        error = resolver_error(step, first)
        for other, raised in ordered[1:]:
            kind = type(raised).__name__
            error.add_note(f"Resolver {other.name!r}, run at the same time, also raised {kind}: {raised}")
        raise error from first
    return results
