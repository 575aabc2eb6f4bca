"""The dependency graph: a deterministic run order, or the whole path of a cycle."""

from __future__ import annotations

from collections.abc import Hashable
from typing import cast

from mcpdi.engine._analyse import Analysis, Node
from mcpdi.engine._errors import InvalidSignature


def run_order(analysis: Analysis) -> list[Node]:
    """Resolvers with providers before consumers; ties broken by depth-first finish order.

    The order depends only on signatures (never on ids or hashing), so every process that
    compiles the same code computes the same plan. The analysis walked the graph depth-first
    and numbered each resolver as it finished: when every provider finished before its
    consumer, that numbering is a run order, and it is the one networkx's
    `lexicographical_topological_sort` keyed by it gives. Only an edge against it (a back
    edge: a cycle) brings networkx in, to find and draw the cycle.
    """
    finish = {identity: node.postorder for identity, node in analysis.nodes.items()}
    finish[analysis.root.identity] = len(analysis.nodes) + 1
    for consumer, provider in analysis.edges:  # a loop, not all(...): no generator per compile
        if finish[provider] >= finish[consumer]:
            return _ordered_or_cycle(analysis, finish)
    return sorted(analysis.nodes.values(), key=_postorder)


def _postorder(node: Node) -> int:
    return node.postorder


def _ordered_or_cycle(analysis: Analysis, finish: dict[Hashable, int]) -> list[Node]:
    import networkx as nx  # only for a graph with a back edge: keeps compiling light

    nodes: dict[Hashable, Node] = {analysis.root.identity: analysis.root, **analysis.nodes}
    graph: nx.DiGraph[Hashable] = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(analysis.edges)
    if not nx.is_directed_acyclic_graph(graph):
        starts = sorted(nodes, key=lambda identity: nodes[identity].preorder)
        # The networkx stub leaves find_cycle's result untyped: a list of (consumer, provider) edges.
        found = cast("list[tuple[Hashable, Hashable]]", nx.find_cycle(graph, source=starts))  # pyright: ignore[reportUnknownMemberType]
        hops = [nodes[edge[0]] for edge in found]
        first = min(range(len(hops)), key=lambda i: hops[i].preorder)
        hops = hops[first:] + hops[:first]
        raise _cycle_error(analysis.root, [*hops, hops[0]])
    ordered = nx.lexicographical_topological_sort(graph.reverse(copy=False), key=finish.__getitem__)
    return [nodes[identity] for identity in ordered if identity != analysis.root.identity]


def _cycle_error(root: Node, path: list[Node]) -> InvalidSignature:
    drawn = " -> ".join(node.info.name for node in path)
    width = max(len(node.info.name) for node in path)
    lines = [
        f"{'  ' if i == 0 else '->'} {node.info.name:<{width}}  {node.info.qualname}  ({node.info.location})"
        for i, node in enumerate(path)
    ]
    msg = (  # the SDK's sentence first, so that code matching its words still matches
        f"Resolver {path[0].info.name!r} has a cyclic dependency. "
        f"Resolvers of {root.info.name!r} depend on each other in a cycle: {drawn}\n"
        + "\n".join(lines)
        + "\nA resolver cannot depend on itself, directly or through other resolvers; "
        "remove one of these dependencies."
    )
    return InvalidSignature(
        msg,
        function=path[0].info.fn,
        cycle=tuple(node.info.qualname for node in path),
    )
