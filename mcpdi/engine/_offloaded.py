"""Offloaded steps: which consecutive sync resolvers of a round share one worker-thread call.

A sync resolver that is not inline runs on a worker thread. Handing work to a thread and
back costs far more than a resolver's body, so the resolvers that follow each other in run
order share one thread call (a *hop*), and a sync root after them joins it. Inside a hop
every resolver still runs as if it had a call of its own: in a copy of the loop's context
(`contextvars` set by one resolver stay its own, as with `anyio.to_thread.run_sync`), after
a check that the call was not cancelled meanwhile, its exception named after it, and a
question returned by it ends the hop. Whatever must run on the event loop ends a hop: an
async resolver, an inline one, an app-scoped one (its value is computed under the scope's
lock), a call-scoped or cleanup one (they are kept or entered by the interpreter).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from mcpdi.engine._plan import Step


def joins_hop(step: Step) -> bool:
    """Whether a step runs inside a hop: a plain sync resolver that is not inline."""
    return not (step.is_async or step.inline or step.scope != "round" or step.cleanup is not None)


def hop_from(
    steps: Sequence[Step],
    start: int,
    values: Sequence[Any],
    blocked: Collection[int],
    pending: bool,
    unset: Any,
) -> list[Step]:
    """`steps[start]` and the steps right after it in run order that share its hop.

    Each joins hops and has not run; a step waiting for a pending question ends the hop, and
    so does one that cannot ask while a question is pending (it waits for the answer).
    """
    hop: list[Step] = []
    for step in steps[start:]:
        if not joins_hop(step) or values[step.index] is not unset or (pending and not step.may_ask):
            break
        if any(edge.provider.index in blocked for edge in step.edges):
            break
        hop.append(step)
    return hop


async def offload_hop(hop: Callable[..., Any], *args: Any) -> Any:
    """`hop(check_cancelled, *args)` on a worker thread; `check_cancelled()` raises there once
    the call is cancelled, so that a cancelled call starts no further resolver."""
    from anyio import to_thread  # lazy: importing the engine must not import anyio
    from anyio.from_thread import check_cancelled

    return await to_thread.run_sync(hop, check_cancelled, *args)
