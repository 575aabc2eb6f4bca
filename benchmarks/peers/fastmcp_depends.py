"""fastmcp's `Depends` (the uncalled-for engine): `without_injected_parameters(tool)` called with the arguments.

That wrapper is what `FunctionTool.run` calls after pydantic validation; resolvers read the
tool argument with `CallArgument()`. fastmcp runs sync dependencies inline and only the sync
tool body on a worker thread (`run_in_thread=True`, its default) or inline (`False`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from benchmarks.graphs import TITLE, Graph, Node, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    from fastmcp.dependencies import CallArgument, Depends
    from fastmcp.server.dependencies import without_injected_parameters
    from fastmcp.utilities.async_utils import call_sync_fn_in_threadpool

    def param(consumer: Node | None, value: str) -> str:
        if value == TITLE:
            return "title: str = CallArgument()" if consumer is not None else "title: str"
        dep = graph.node(value)
        return f"{value}: {dep.type} = Depends({dep.fn})"

    source = render(graph, is_async=variant == "async", param=param)
    scope = execute(source, {"Depends": Depends, "CallArgument": CallArgument}, "bench_fastmcp")
    offload = variant == "sync-offload"
    wrapper = without_injected_parameters(scope["tool"], run_in_thread=offload)

    if inspect.iscoroutinefunction(wrapper):

        async def call(arguments: Mapping[str, Any]) -> Any:
            return await wrapper(**arguments)

    elif offload:  # no dependencies: fastmcp hands the plain sync tool to its threadpool

        async def call(arguments: Mapping[str, Any]) -> Any:
            return await call_sync_fn_in_threadpool(wrapper, **arguments)

    else:

        async def call(arguments: Mapping[str, Any]) -> Any:
            return wrapper(**arguments)

    note = {
        "sync-inline": "run_in_thread=False",
        "sync-offload": "run_in_thread=True: only the tool body offloaded, resolvers inline",
    }.get(variant, "")
    return Built(call, note)


IMPL = Impl("fastmcp", build)
