"""The engine layer: resolver overhead per call, every implementation against the hand-written call."""

from __future__ import annotations

import asyncio
import gc
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.graphs import Graph, Variant
from benchmarks.peers import Built, Impl, Unavailable
from benchmarks.summary import Verdict, not_measured
from benchmarks.timing import Clock, Samples, measure

BASELINE = "hand"
GOAL, FLOOR = 1.5, 3.0


def clock_for(variant: Variant) -> Clock:
    return "wall" if variant == "sync-offload" else "cpu"


@dataclass(frozen=True, slots=True)
class Row:
    graph: str
    variant: Variant
    impl: str
    samples: Samples | None  # None: not measured, see `note`
    note: str
    baseline: Samples | None


def _check(loop: asyncio.AbstractEventLoop, graph: Graph, built: dict[str, Built | Unavailable]) -> None:
    """Replace every implementation that fails or returns something else than the baseline by an Unavailable."""
    expected = None
    for name, item in list(built.items()):
        if isinstance(item, Unavailable):
            continue
        try:
            result = loop.run_until_complete(item.call(graph.arguments))
        except Exception as exc:
            built[name] = Unavailable(f"ERROR: call raised {type(exc).__name__}: {exc}")
            continue
        if name == BASELINE:
            expected = result
        elif result != expected:
            built[name] = Unavailable(f"ERROR: wrong result {result!r:.80}, expected {expected!r:.80}")


def _build(impl: Impl, graph: Graph, variant: Variant) -> Built | Unavailable:
    try:
        return impl.build(graph, variant)
    except Exception as exc:
        traceback.print_exc()
        return Unavailable(f"ERROR: build raised {type(exc).__name__}: {exc}")


def run(
    graphs: Sequence[Graph],
    variants: Sequence[Variant],
    impls: Sequence[Impl],
    *,
    repeats: int,
    target_s: float,
    clock: Clock | None = None,
    progress: bool = True,
) -> list[Row]:
    """Measure every graph x variant; `clock=None` picks CPU time on the loop thread, wall time when offloaded."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    rows: list[Row] = []
    try:
        for graph in graphs:
            for variant in variants:
                built = {impl.name: _build(impl, graph, variant) for impl in impls}
                _check(loop, graph, built)
                # Everything built so far is long-lived: take it out of the collector's sight, so the
                # gc.collect() before each block costs little and collections during one see the calls only.
                gc.collect()
                gc.freeze()
                calls = {name: b.call for name, b in built.items() if isinstance(b, Built)}
                if progress:
                    print(
                        f"  {graph.name} / {variant} ({clock or clock_for(variant)}): {', '.join(calls)}",
                        file=sys.stderr,
                        flush=True,
                    )
                group_clock = clock or clock_for(variant)
                samples = measure(
                    loop, calls, graph.arguments, repeats=repeats, target_s=target_s, clock=group_clock
                )
                base = samples.get(BASELINE)
                for name, item in built.items():
                    if isinstance(item, Built):
                        rows.append(Row(graph.name, variant, name, samples[name], item.note, base))
                    else:
                        rows.append(Row(graph.name, variant, name, None, item.reason, base))
    finally:
        gc.unfreeze()
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        asyncio.set_event_loop(None)
    return rows


def fmt_us(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _fmt_ratio(value: float) -> str:
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table (one row per graph/variant/implementation) and the notes behind it."""
    lines = [
        "| graph | variant | impl | min µs | median µs | × hand (min) | × hand (median) | calls/block |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    notes: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.samples is None:
            lines.append(f"| {row.graph} | {row.variant} | {row.impl} | n/a | n/a | | | |")
            notes.setdefault((row.impl, row.variant), f"n/a: {row.note}")
            continue
        s, b = row.samples, row.baseline
        ratios = ("", "") if b is None else (_fmt_ratio(s.min / b.min), _fmt_ratio(s.median / b.median))
        lines.append(
            f"| {row.graph} | {row.variant} | {row.impl} | {fmt_us(s.min)} | {fmt_us(s.median)} "
            f"| {ratios[0]} | {ratios[1]} | {s.n} |"
        )
        if row.note:
            notes.setdefault((row.impl, row.variant), row.note)
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- {impl}, {variant}: {text}" for (impl, variant), text in notes.items()]
    return "\n".join(lines)


def format_goal(rows: Sequence[Row], impl: str = "mcpdi") -> str:
    """mcpdi against the hand-written call on the graphs the goal covers (async and inline sync)."""
    lines = [f"{impl} vs hand-written (goal ≤ {GOAL}×, floor {FLOOR}×; min-based ratio):", ""]
    for row in rows:
        if row.impl != impl or row.variant == "sync-offload":
            continue
        if row.samples is None or row.baseline is None:
            lines.append(f"- {row.graph} / {row.variant}: not measured ({row.note})")
            continue
        ratio = row.samples.min / row.baseline.min
        verdict = "meets goal" if ratio <= GOAL else "within floor" if ratio <= FLOOR else "MISSES floor"
        lines.append(f"- {row.graph} / {row.variant}: {ratio:.2f}× ({verdict})")
    return "\n".join(lines)


def verdict(rows: Sequence[Row], impl: str = "mcpdi") -> Verdict:
    """No regression in the engine rows: the worst min-based ratio to the hand-written call
    over the graphs and variants the goal covers (async and inline sync)."""
    goal = f"engine ≤ {GOAL}× a hand-written call (worst graph, async and sync-inline)"
    ratios = [
        (row.samples.min / row.baseline.min, f"{row.graph} / {row.variant}")
        for row in rows
        if row.impl == impl and row.variant != "sync-offload" and row.samples and row.baseline
    ]
    if not ratios:
        return not_measured("-", goal, "not measured")
    worst = max(ratios)
    return Verdict("-", goal, f"worst {worst[0]:.2f}× ({worst[1]}, min)", worst[0] <= GOAL)
