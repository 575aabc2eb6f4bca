"""mcpdi's engine: `compile_plan(tool)` once, then `await plan.run(arguments)` per call."""

from __future__ import annotations

from typing import Annotated

from benchmarks.graphs import TITLE, Graph, Node, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable, adapted


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    try:
        from mcpdi.engine import Resolve, compile_plan
    except ImportError as exc:
        return Unavailable(f"mcpdi.engine not importable ({exc})")
    inline = variant == "sync-inline"
    extra = ", inline=True" if inline else ""

    def param(_consumer: Node | None, value: str) -> str:
        if value == TITLE:
            return "title: str"
        dep = graph.node(value)
        return f"{value}: Annotated[{dep.type}, Resolve({dep.fn}{extra})]"

    source = render(graph, is_async=variant == "async", param=param)
    scope = execute(source, {"Annotated": Annotated, "Resolve": Resolve}, "bench_mcpdi")
    plan = compile_plan(scope["tool"], root_inline=True if inline else None)
    note = {
        "sync-inline": "Resolve(fn, inline=True), root_inline=True",
        "sync-offload": "default: sync resolvers and the sync tool offloaded",
    }.get(variant, "")
    return Built(adapted(plan.run), note)


IMPL = Impl("mcpdi", build)
