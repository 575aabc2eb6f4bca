"""Plans with a cleanup, call-scoped or concurrent step, against hand-written code doing the same.

Each case is one graph, `r1(title)`, `r2(v1)`, `r3(v1)`, `tool(title, v2, v3)`, all `async
def`, in one of five shapes:

| shape | mcpdi | hand-written |
| --- | --- | --- |
| plain | `Resolve(r1)` (the generated path) | `v1 = await r1(title)`, ... |
| cleanup | `r1` an async generator (`yield`, then cleanup) | drives the generator: `__anext__`, then `asend(RoundOutcome.COMPLETED)` or `athrow(error)` |
| call-scoped | `Resolve(r1, scope="call")` | also records `v1` for the next round (a dict) |
| call-scoped, adapted input | `Resolve(r2, scope="call")`, its `v1` doubled by an adapter | `v2 = await r2(double(v1))`, recorded for the next round |
| concurrent | `Resolve(r2, concurrent=True)`, `Resolve(r3, concurrent=True)` | `r2` and `r3` in one anyio task group |

µs per `await plan.run(arguments)`, CPU time of the loop thread, calibrated interleaved
blocks (`timing.measure`); the goal: each shape within 2× hand-written code doing the same
(the plain shape's generated code runs at 1.0–1.5× its hand-written call).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from benchmarks.summary import Verdict, not_measured
from benchmarks.timing import Samples, measure

SHAPES = ("plain", "cleanup", "call-scoped", "call-scoped, adapted input", "concurrent")
GOAL = 2.0
ARGUMENTS: Mapping[str, Any] = {"title": "Dune"}


def double(value: int) -> int:
    """The adapter of the call-scoped step's input, in mcpdi's plan and in the hand-written code."""
    return value * 2


def _plan(shape: str) -> Any:
    from mcpdi.engine import Adapter, Edge, Resolve, compile_plan

    if shape == "cleanup":

        async def r1(title: str) -> Any:
            yield len(title)

    else:

        async def r1(title: str) -> Any:
            return len(title)

    first = Resolve(r1, scope="call") if shape == "call-scoped" else Resolve(r1)
    concurrent = shape == "concurrent"
    adapted = shape == "call-scoped, adapted input"

    async def r2(v1: Annotated[int, first]) -> int:
        return v1 + 2

    async def r3(v1: Annotated[int, first]) -> int:
        return v1 + 3

    async def tool(
        title: str,
        v2: Annotated[int, Resolve(r2, concurrent=concurrent, scope="call" if adapted else "round")],
        v3: Annotated[int, Resolve(r3, concurrent=concurrent)],
    ) -> tuple[str, int, int]:
        return (title, v2, v3)

    def adapt(edge: Edge) -> Adapter | None:
        return Adapter(plain=double) if adapted and edge.consumer == "r2" else None

    return compile_plan(tool, localns=dict(locals()), adapt=adapt)


def _hand(shape: str) -> Any:
    import anyio

    from mcpdi.engine import RoundOutcome

    async def plain_r1(title: str) -> int:
        return len(title)

    async def cleanup_r1(title: str) -> AsyncGenerator[int, Any]:
        yield len(title)

    async def r2(v1: int) -> int:
        return v1 + 2

    async def r3(v1: int) -> int:
        return v1 + 3

    async def tool(title: str, v2: int, v3: int) -> tuple[str, int, int]:
        return (title, v2, v3)

    async def plain(arguments: Mapping[str, Any]) -> Any:
        title = arguments["title"]
        v1 = await plain_r1(title)
        return await tool(title, await r2(v1), await r3(v1))

    async def call_scoped(arguments: Mapping[str, Any]) -> Any:
        title = arguments["title"]
        kept: dict[str, Any] = {}
        v1 = kept["r1"] = await plain_r1(title)
        return await tool(title, await r2(v1), await r3(v1))

    async def call_scoped_adapted(arguments: Mapping[str, Any]) -> Any:
        title = arguments["title"]
        kept: dict[str, Any] = {}
        v1 = await plain_r1(title)
        v2 = kept["r2"] = await r2(double(v1))
        return await tool(title, v2, await r3(v1))

    async def cleanup(arguments: Mapping[str, Any]) -> Any:
        title = arguments["title"]
        generator = cleanup_r1(title)
        v1 = await generator.__anext__()
        try:
            result = await tool(title, await r2(v1), await r3(v1))
        except BaseException as error:
            try:
                await generator.athrow(error)
            except BaseException as raised:
                if raised is not error:
                    raise
            raise
        try:
            await generator.asend(RoundOutcome.COMPLETED)
        except StopAsyncIteration:
            return result
        msg = "r1 yielded twice"
        raise RuntimeError(msg)

    async def concurrent(arguments: Mapping[str, Any]) -> Any:
        title = arguments["title"]
        v1 = await plain_r1(title)
        values: dict[str, int] = {}

        async def two() -> None:
            values["v2"] = await r2(v1)

        async def three() -> None:
            values["v3"] = await r3(v1)

        async with anyio.create_task_group() as group:
            group.start_soon(two)
            group.start_soon(three)
        return await tool(title, values["v2"], values["v3"])

    return {
        "plain": plain,
        "cleanup": cleanup,
        "call-scoped": call_scoped,
        "call-scoped, adapted input": call_scoped_adapted,
        "concurrent": concurrent,
    }[shape]


@dataclass(frozen=True, slots=True)
class Row:
    shape: str
    mcpdi: Samples
    hand: Samples
    generated: bool  # whether mcpdi ran it in generated code (not handed to the interpreter whole)


def _is_generated(plan: Any) -> bool:
    return "_resume(_PLAN, collect, arguments, context, answers, ask, 0, [_UNSET] *" not in plan.source


def run(*, repeats: int, target_s: float) -> list[Row]:
    loop = asyncio.new_event_loop()
    rows: list[Row] = []
    try:
        for shape in SHAPES:
            plan, hand = _plan(shape), _hand(shape)
            expected = loop.run_until_complete(hand(ARGUMENTS))
            got = loop.run_until_complete(plan.run(ARGUMENTS))
            if got != expected:
                msg = f"{shape}: mcpdi answered {got!r}, the hand-written call {expected!r}"
                raise RuntimeError(msg)
            gc.collect()
            gc.freeze()
            samples = measure(
                loop,
                {"mcpdi": plan.run, "hand": hand},
                ARGUMENTS,
                repeats=repeats,
                target_s=target_s,
                clock="cpu",
            )
            gc.unfreeze()
            rows.append(Row(shape, samples["mcpdi"], samples["hand"], _is_generated(plan)))
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    return rows


def format_table(rows: list[Row]) -> str:
    lines = [
        "| shape | mcpdi runs it in | mcpdi min µs | mcpdi median µs | hand min µs | hand median µs "
        "| × hand (median) | × mcpdi plain (median) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    plain = next((r for r in rows if r.shape == "plain"), None)
    for r in rows:
        where = "generated code" if r.generated else "the interpreter"
        vs_plain = f"{r.mcpdi.median / plain.mcpdi.median:.2f}×" if plain else ""
        lines.append(
            f"| {r.shape} | {where} | {r.mcpdi.min:.2f} | {r.mcpdi.median:.2f} | {r.hand.min:.2f} "
            f"| {r.hand.median:.2f} | {r.mcpdi.median / r.hand.median:.2f}× | {vs_plain} |"
        )
    return "\n".join(lines)


def verdicts(rows: list[Row]) -> list[Verdict]:
    out: list[Verdict] = []
    by_shape = {r.shape: r for r in rows}
    for shape in SHAPES[1:]:
        goal = f"{shape} plan ≤ {GOAL:g}× hand-written code doing the same"
        r = by_shape.get(shape)
        if r is None:
            out.append(not_measured("5", goal, "not measured"))
            continue
        ratio = r.mcpdi.median / r.hand.median
        where = "generated" if r.generated else "interpreted"
        figure = f"{ratio:.2f}× ({where}; mcpdi {r.mcpdi.median:.2f} µs, hand {r.hand.median:.2f} µs, median)"
        out.append(Verdict("5", goal, figure, ratio <= GOAL))
    return out


def run_shapes(quick: bool) -> list[Verdict]:
    repeats = 9 if quick else 31
    print(
        f"## shapes: cleanup, call-scoped and concurrent plans (µs per call, {repeats} interleaved repeats)\n"
    )
    rows = run(repeats=repeats, target_s=0.003 if quick else 0.005)
    print(format_table(rows))
    print()
    return verdicts(rows)
