"""`mcp` 2.3.0: an `MCPServer` with one tool per graph, parameters `Annotated[T, Resolve(fn)]`.

mcp wraps every resolved value in `AcceptedElicitation[Any]`, a parametrized generic that
pydantic caches weakly: after a garbage collection it is rebuilt on the next call. The
module keeps it alive (`_KEEP_WARM`), measuring mcp at its best (as the engine peer does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from benchmarks.graphs import TITLE, Graph, Node, execute
from benchmarks.servers import tool_source

_KEEP_WARM: list[Any] = []


def build(graphs: Sequence[Graph]) -> Any:
    from mcp.server.elicitation import AcceptedElicitation
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.resolve import Resolve

    if not _KEEP_WARM:
        _KEEP_WARM.append(AcceptedElicitation[Any])

    server = MCPServer("bench")
    for graph in graphs:

        def param(_consumer: Node | None, value: str, graph: Graph = graph) -> str:
            if value == TITLE:
                return "title: str"
            dep = graph.node(value)
            return f"{value}: Annotated[{dep.type}, Resolve({dep.fn})]"

        scope = execute(tool_source(graph, param), {"Annotated": Annotated, "Resolve": Resolve}, "bench_mcp")
        server.add_tool(scope["tool"], name=graph.name)
    return server


def build_app(graphs: Sequence[Graph]) -> Any:
    """The Streamable HTTP app, JSON replies, sessions for the handshake era; 2026-07-28 is stateless."""
    return build(graphs).streamable_http_app(json_response=True)
