"""`python -m benchmarks --profile GRAPH[/VARIANT]`: where one implementation spends a call (cProfile)."""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
from collections.abc import Mapping
from typing import Any

from benchmarks.graphs import Variant, all_graphs
from benchmarks.peers import Built, Call, all_impls


async def _calls(call: Call, arguments: Mapping[str, Any], n: int) -> None:
    for _ in range(n):
        await call(arguments)


def profile(spec: str, impl_name: str = "mcpdi", calls: int = 20_000, top: int = 20) -> str:
    graph_name, _, variant_name = spec.partition("/")
    variant: Variant = variant_name or "async"  # type: ignore[assignment]
    graph = next(g for g in all_graphs() if g.name == graph_name)
    impl = next(i for i in all_impls() if i.name == impl_name)
    built = impl.build(graph, variant)
    if not isinstance(built, Built):
        return f"{impl_name} cannot run {spec}: {built.reason}"
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_calls(built.call, graph.arguments, 100))
        profiler = cProfile.Profile()
        profiler.enable()
        loop.run_until_complete(_calls(built.call, graph.arguments, calls))
        profiler.disable()
    finally:
        loop.close()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return f"## profile: {impl_name}, {graph.name} / {variant}, {calls} calls\n\n{out.getvalue()}"
