"""`mcp` 2.3.0's resolver path: a real registered `Tool` with `Resolve` parameters.

Two rows: `mcp` is the resolver path alone (`resolve_arguments`, then `call_fn`, the two
calls `Tool.run` makes around the resolvers), `mcp+validate` is the whole `Tool.run`
(pydantic argument validation first). The `Context` has no request behind it (as
`MCPServer.call_tool` builds one), so no protocol version: the cheapest, synchronous path.

mcp wraps every resolved value in `AcceptedElicitation[Any]`; pydantic caches parametrized
generic classes weakly, so after a garbage collection that class is rebuilt (tens of µs)
on the next call. The module keeps it alive (`_KEEP_WARM`), measuring mcp at its best.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from benchmarks.graphs import TITLE, Graph, Node, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable

_NO_INLINE = "mcp 2.3.0 always runs sync resolvers and sync tools on a worker thread"
_KEEP_WARM: list[Any] = []


def _register(graph: Graph, variant: Variant) -> Any:
    from mcp.server.elicitation import AcceptedElicitation
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.resolve import Resolve
    from mcp.server.mcpserver.tools.base import Tool

    def param(_consumer: Node | None, value: str) -> str:
        if value == TITLE:
            return "title: str"
        dep = graph.node(value)
        return f"{value}: Annotated[{dep.type}, Resolve({dep.fn})]"

    if not _KEEP_WARM:
        _KEEP_WARM.append(AcceptedElicitation[Any])
    source = render(graph, is_async=variant == "async", param=param)
    scope = execute(source, {"Annotated": Annotated, "Resolve": Resolve}, "bench_mcp")
    server = MCPServer("bench")
    tool = Tool.from_function(scope["tool"], name="tool", structured_output=False)
    return tool, Context(mcp_server=server)


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    if variant == "sync-inline":
        return Unavailable(_NO_INLINE)
    from mcp.server.mcpserver.resolve import resolve_arguments

    tool, context = _register(graph, variant)
    params, plans, call_fn, fn, is_async = (
        tool.resolved_params,
        tool.resolver_plans,
        tool.fn_metadata.call_fn,
        tool.fn,
        tool.is_async,
    )

    if not params:

        async def call(arguments: Mapping[str, Any]) -> Any:
            return await call_fn(fn, is_async, arguments)

    else:

        async def call(arguments: Mapping[str, Any]) -> Any:
            resolved = await resolve_arguments(params, plans, arguments, context)
            return await call_fn(fn, is_async, arguments, resolved)

    return Built(call, "resolve_arguments + call_fn (no argument validation)")


def build_with_validation(graph: Graph, variant: Variant) -> Built | Unavailable:
    if variant == "sync-inline":
        return Unavailable(_NO_INLINE)
    tool, context = _register(graph, variant)
    run = tool.run

    async def call(arguments: Mapping[str, Any]) -> Any:
        return await run(arguments, context)

    return Built(call, "Tool.run: pydantic argument validation + resolvers + call")


IMPL = Impl("mcp", build)
IMPL_WITH_VALIDATION = Impl("mcp+validate", build_with_validation)
