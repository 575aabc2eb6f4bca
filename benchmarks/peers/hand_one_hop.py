"""The offload floor: the whole sync graph, resolvers and tool, run by one `anyio.to_thread.run_sync` call.

Straight-line code calls every resolver in order and then the tool inside one function,
and that function is handed to a worker thread once: one thread hop per call, whatever
the graph. Only `sync-offload` has it; the other variants have no thread hop to count.
"""

from __future__ import annotations

from anyio.to_thread import run_sync

from benchmarks.graphs import Graph, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable, adapted


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    if variant != "sync-offload":
        return Unavailable("only sync-offload has a thread hop to save")
    lines = [
        render(graph, is_async=False, param=lambda _node, x: x),
        "def whole(title):",
    ]
    lines += [f"    {n.value} = {n.fn}({', '.join(n.inputs)})" for n in graph.nodes]
    lines.append(f"    return tool({', '.join(graph.tool_inputs)})")
    lines += [
        "async def hand_one_hop(arguments):",
        "    return await run_sync(whole, arguments['title'])",
    ]
    scope = execute("\n".join(lines), {"run_sync": run_sync}, "bench_hand_one_hop")
    return Built(adapted(scope["hand_one_hop"]), "resolvers and tool in one anyio.to_thread.run_sync")


IMPL = Impl("hand-1hop", build)
