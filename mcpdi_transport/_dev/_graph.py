"""A tool's resolver graph as JSON for the page: nodes (arguments, context, resolvers, the tool) and edges.

Reads only the compiled plan (`MCPServer.registered_tool(name).plan`), so it can be swapped for
any other reader producing the same shape.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from mcpdi.engine import Binding, Plan

__all__ = ("GraphEdge", "GraphNode", "ToolGraph", "describe_plan")

NodeKind = Literal["argument", "context", "resolver", "tool"]


class GraphNode(TypedDict):
    id: str
    kind: NodeKind
    label: str
    location: str
    asks: bool


class GraphEdge(TypedDict):
    source: str
    target: str
    parameter: str


class ToolGraph(TypedDict):
    tool: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def _type_name(kind: Any) -> str:
    return str(getattr(kind, "__name__", kind))


def _source_id(binding: Binding) -> str:
    if binding.source == "argument":
        return f"argument:{binding.argument}"
    if binding.source == "context":
        return f"context:{_type_name(binding.context_type)}"
    assert binding.edge is not None  # a resolved binding always carries its edge
    return f"resolver:{binding.edge.provider.key}"


def describe_plan(plan: Plan) -> ToolGraph:
    """The plan's structure: every argument, context type, resolver (in run order) and the tool.

    A resolver's `asks` is true when its return annotation lets it ask a question (`Elicit`,
    `Sample`, `ListRoots`); an edge goes from where a value comes from to the parameter it fills.
    """
    nodes: list[GraphNode] = [
        {"id": f"argument:{a.name}", "kind": "argument", "label": a.name, "location": "", "asks": False}
        for a in plan.arguments
    ]
    edges: list[GraphEdge] = []
    contexts: dict[str, GraphNode] = {}

    def connect(bindings: tuple[Binding, ...], target: str) -> None:
        for binding in bindings:
            source = _source_id(binding)
            if binding.source == "context" and source not in contexts:
                label = _type_name(binding.context_type)
                contexts[source] = {
                    "id": source,
                    "kind": "context",
                    "label": label,
                    "location": "",
                    "asks": False,
                }
            edges.append({"source": source, "target": target, "parameter": binding.parameter})

    for step in plan.steps:
        node_id = f"resolver:{step.key}"
        nodes.append(
            {
                "id": node_id,
                "kind": "resolver",
                "label": step.name,
                "location": step.location,
                "asks": step.may_ask,
            }
        )
        connect(step.bindings, node_id)
    connect(plan.bindings, "tool")
    nodes.extend(contexts.values())
    nodes.append({"id": "tool", "kind": "tool", "label": plan.name, "location": plan.location, "asks": False})
    return {"tool": plan.name, "nodes": nodes, "edges": edges}
