"""The physical limit: the same resolver functions called in order by straight-line code."""

from __future__ import annotations

from anyio.to_thread import run_sync

from benchmarks.graphs import Graph, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable, adapted


def _call_expression(fn: str, inputs: tuple[str, ...], variant: Variant) -> str:
    args = ", ".join(inputs)
    if variant == "async":
        return f"await {fn}({args})"
    if variant == "sync-offload":
        return f"await run_sync({fn}, {args})"
    return f"{fn}({args})"


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    is_async = variant == "async"
    lines = [
        render(graph, is_async=is_async, param=lambda _node, x: x),
        "async def hand(arguments):",
        "    title = arguments['title']",
    ]
    lines += [f"    {n.value} = {_call_expression(n.fn, n.inputs, variant)}" for n in graph.nodes]
    lines.append(f"    return {_call_expression('tool', graph.tool_inputs, variant)}")
    scope = execute("\n".join(lines), {"run_sync": run_sync}, "bench_hand")
    note = "each sync call offloaded with anyio.to_thread.run_sync" if variant == "sync-offload" else ""
    return Built(adapted(scope["hand"]), note)


IMPL = Impl("hand", build)
