"""The offload layer: sync resolvers run on worker threads, against one thread hop for the whole call.

Graphs `chain10`, `fanin10` and `dag50` in the `sync-offload` variant (every function a
`def`). Rows: every implementation of the engine layer, plus `hand-1hop`, straight-line
code that runs all resolvers and the tool inside one `anyio.to_thread.run_sync` call, the
least an offloading library can cost. Wall time (the cost is the hand-offs to worker
threads and back), longer blocks than the engine layer since one dag50 call takes
milliseconds when each function is a hop.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks import engine
from benchmarks.engine import Row
from benchmarks.graphs import Graph, all_graphs
from benchmarks.peers import all_impls

GRAPHS = ("chain10", "fanin10", "dag50")
ONE_HOP = "hand-1hop"


def graphs() -> list[Graph]:
    return [g for g in all_graphs() if g.name in GRAPHS]


def run(*, repeats: int, target_s: float) -> list[Row]:
    return engine.run(
        graphs(), ["sync-offload"], all_impls(), repeats=repeats, target_s=target_s, clock="wall"
    )


def format_table(rows: Sequence[Row]) -> str:
    """Per graph: every implementation's µs per call, against the per-function offload and the one hop."""
    lines = [
        "| graph | impl | min µs | median µs | × hand (median) | × one hop (median) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    by_graph: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_graph.setdefault(row.graph, {})[row.impl] = row
    for name, impls in by_graph.items():
        hop = impls.get(ONE_HOP)
        for impl, row in impls.items():
            if row.samples is None:
                lines.append(f"| {name} | {impl} | n/a | n/a | | ({row.note}) |")
                continue
            s = row.samples
            base = f"{s.median / row.baseline.median:.2f}×" if row.baseline else ""
            one = f"{s.median / hop.samples.median:.2f}×" if hop and hop.samples else ""
            lines.append(
                f"| {name} | {impl} | {engine.fmt_us(s.min)} | {engine.fmt_us(s.median)} | {base} | {one} |"
            )
    return "\n".join(lines)
