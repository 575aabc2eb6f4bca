"""fast-depends 3.x: the tool decorated with `@inject`, resolvers as `= Depends(fn)` defaults.

Measured with `cast=False` (on `inject` and every `Depends`), its dependency injection
without pydantic casting, as the engine does no validation either. A sync tool makes the
whole solve synchronous (inline); with an async tool fast-depends offloads sync
dependencies, so "sync resolvers under a sync tool, offloaded" has no form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.graphs import TITLE, Graph, Node, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    if variant == "sync-offload":
        return Unavailable(
            "fast-depends solves a sync tool's graph inline; it offloads only under an async tool"
        )
    from fast_depends import Depends, inject

    def param(_consumer: Node | None, value: str) -> str:
        if value == TITLE:
            return "title: str"
        dep = graph.node(value)
        return f"{value}: {dep.type} = Depends({dep.fn}, cast=False)"

    source = render(graph, is_async=variant == "async", param=param, tool_decorator="@inject(cast=False)")
    scope = execute(source, {"Depends": Depends, "inject": inject}, "bench_fast_depends")
    tool = scope["tool"]

    if variant == "async":

        async def call(arguments: Mapping[str, Any]) -> Any:
            return await tool(**arguments)

    else:

        async def call(arguments: Mapping[str, Any]) -> Any:
            return tool(**arguments)

    return Built(call, "cast=False")


IMPL = Impl("fast-depends", build)
