"""Opt-in concurrency: two independent 50 ms I/O resolvers, one after the other or together."""

from __future__ import annotations

import time
from typing import Annotated

import anyio

from mcpdi.engine import Plan, Resolve, compile_plan

IO_SECONDS = 0.05


async def inventory() -> int:
    await anyio.sleep(IO_SECONDS)  # stands for a 50 ms network call
    return 3


async def prices() -> int:
    await anyio.sleep(IO_SECONDS)
    return 12


async def one_after_the_other(
    stock: Annotated[int, Resolve(inventory)], price: Annotated[int, Resolve(prices)]
) -> int:
    return stock * price


async def together(
    stock: Annotated[int, Resolve(inventory, concurrent=True)],
    price: Annotated[int, Resolve(prices, concurrent=True)],
) -> int:
    return stock * price


def _wall_ms(plan: Plan, repeats: int) -> list[float]:
    async def measure() -> list[float]:
        times: list[float] = []
        for _ in range(repeats):
            start = time.perf_counter()
            await plan.run({})
            times.append((time.perf_counter() - start) * 1000)
        return times

    return anyio.run(measure)


def run(repeats: int = 5) -> list[tuple[str, float, float]]:
    """(variant, min ms, median ms) per variant, wall time of one call."""
    rows: list[tuple[str, float, float]] = []
    for name, fn in (("sequential (default)", one_after_the_other), ("concurrent=True", together)):
        times = sorted(_wall_ms(compile_plan(fn), repeats))
        rows.append((name, times[0], times[len(times) // 2]))
    return rows


def format_table(rows: list[tuple[str, float, float]]) -> str:
    lines = [
        f"## engine: two independent {IO_SECONDS * 1000:g} ms I/O resolvers, wall ms per call\n",
        "| variant | min ms | median ms |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {name} | {low:.1f} | {median:.1f} |" for name, low, median in rows]
    return "\n".join(lines)
