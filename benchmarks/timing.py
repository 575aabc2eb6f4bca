"""Calibrated, interleaved timing of awaitable calls on one event loop.

Each implementation gets its own inner-loop size N (so one block lasts about `target`
seconds), then every repeat runs one block of every implementation, in a rotated order,
so drift and noise on the machine land on all of them alike. A block is N awaited calls
inside one coroutine; its time divided by N is one sample.

Two clocks: `wall` (perf_counter) and `cpu` (the CPU time of the event-loop thread). On a
shared machine a wall-clock block is stretched whenever the scheduler hands the core to
another process; CPU time is not. Code that runs entirely on the loop thread is therefore
timed in CPU time by default, while offloaded calls (whose cost is the hand-off to other
threads and back) need the wall clock.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter_ns, thread_time_ns
from typing import Any, Literal

from benchmarks.peers import Call

Clock = Literal["wall", "cpu"]
_CLOCKS: dict[Clock, Callable[[], int]] = {"wall": perf_counter_ns, "cpu": thread_time_ns}


@dataclass(frozen=True, slots=True)
class Samples:
    """Microseconds per call, one value per repeat, from blocks of `n` calls."""

    n: int
    per_call_us: tuple[float, ...]

    @property
    def min(self) -> float:
        return min(self.per_call_us)

    @property
    def median(self) -> float:
        return statistics.median(self.per_call_us)


async def _block(call: Call, arguments: Mapping[str, Any], n: int, clock: Callable[[], int]) -> int:
    start = clock()
    for _ in range(n):
        await call(arguments)
    return clock() - start


def _run_block(
    loop: asyncio.AbstractEventLoop, call: Call, arguments: Mapping[str, Any], n: int, clock: Clock
) -> int:
    gc.collect()
    return loop.run_until_complete(_block(call, arguments, n, _CLOCKS[clock]))


def calibrate(
    loop: asyncio.AbstractEventLoop, call: Call, arguments: Mapping[str, Any], target_s: float, clock: Clock
) -> int:
    """The number of calls one block needs to last about `target_s` (warming the call up on the way).

    The estimate is the fastest of three trial blocks, so one trial slowed by the machine
    does not shrink the blocks (short blocks would have an easier time dodging noise).
    """
    target_ns = target_s * 1e9
    n = 1
    while True:
        elapsed = _run_block(loop, call, arguments, n, clock)
        if elapsed >= target_ns / 5 or n >= 1 << 24:
            break
        n *= 5 if elapsed < target_ns / 50 else 2
    elapsed = min(elapsed, *(_run_block(loop, call, arguments, n, clock) for _ in range(2)))
    return max(1, round(n * target_ns / max(elapsed, 1)))


def measure(
    loop: asyncio.AbstractEventLoop,
    calls: Mapping[str, Call],
    arguments: Mapping[str, Any],
    *,
    repeats: int,
    target_s: float,
    clock: Clock,
) -> dict[str, Samples]:
    """Interleaved samples for every call of one graph and variant."""
    sizes = {name: calibrate(loop, call, arguments, target_s, clock) for name, call in calls.items()}
    names: Sequence[str] = list(calls)
    collected: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in [*names[shift:], *names[:shift]]:
            n = sizes[name]
            collected[name].append(_run_block(loop, calls[name], arguments, n, clock) / n / 1000)
    return {name: Samples(sizes[name], tuple(values)) for name, values in collected.items()}
