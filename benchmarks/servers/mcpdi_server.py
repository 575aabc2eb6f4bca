"""mcpdi: an `MCPServer` with one tool per graph, parameters `Annotated[T, Resolve(fn)]`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from benchmarks.graphs import TITLE, Graph, Node, execute
from benchmarks.servers import tool_source


def build(graphs: Sequence[Graph]) -> Any:
    from mcpdi import MCPServer, Resolve

    server = MCPServer("bench")
    for graph in graphs:

        def param(_consumer: Node | None, value: str, graph: Graph = graph) -> str:
            if value == TITLE:
                return "title: str"
            dep = graph.node(value)
            return f"{value}: Annotated[{dep.type}, Resolve({dep.fn})]"

        scope = execute(
            tool_source(graph, param), {"Annotated": Annotated, "Resolve": Resolve}, "bench_mcpdi"
        )
        server.add_tool(scope["tool"], name=graph.name)
    return server


def build_app(graphs: Sequence[Graph]) -> Any:
    """The Streamable HTTP app, JSON replies, both protocol eras (handshake era with sessions)."""
    server = build(graphs)
    from mcpdi_transport import build_http_app

    return build_http_app(server.server, json_response=True)
