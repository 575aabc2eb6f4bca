"""The resolver graphs every implementation is timed on, as data, plus the source renderer.

A graph is described once (nodes, their inputs, their bodies). Each implementation renders
it into real Python source in its own idiom (``Annotated[T, Resolve(f)]``, ``= Depends(f)``,
straight-line calls) and executes that source, so every implementation runs plain
functions with identical bodies, written the way an author of that library would write them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Variant = Literal["async", "sync-inline", "sync-offload"]
VARIANTS: tuple[Variant, ...] = ("async", "sync-inline", "sync-offload")

TITLE = "title"
"""The one tool argument every graph has; resolvers may read it by name."""


@dataclass(frozen=True, slots=True)
class Stock:
    title: str
    count: int


@dataclass(frozen=True, slots=True)
class Delivery:
    days: int


@dataclass(frozen=True, slots=True)
class Node:
    """One resolver: ``fn`` computes ``value`` (the parameter name consumers use)."""

    fn: str
    value: str
    type: str
    inputs: tuple[str, ...]  # TITLE first when present, then other nodes' `value` names
    body: str  # a Python expression over `inputs`


@dataclass(frozen=True, slots=True)
class Graph:
    name: str
    nodes: tuple[Node, ...]  # topological order
    tool_inputs: tuple[str, ...]  # TITLE first, then resolved values
    arguments: Mapping[str, Any]

    def node(self, value: str) -> Node:
        return next(n for n in self.nodes if n.value == value)

    @property
    def tool_body(self) -> str:
        return "(" + ", ".join(self.tool_inputs) + ",)"


def _none() -> Graph:
    return Graph("none", (), (TITLE,), {TITLE: "Dune"})


def _one() -> Graph:
    stock = Node("check_stock", "stock", "Stock", (TITLE,), "Stock(title, len(title))")
    return Graph("one", (stock,), (TITLE, "stock"), {TITLE: "Dune"})


def _diamond() -> Graph:
    stock = Node("check_stock", "stock", "Stock", (TITLE,), "Stock(title, len(title))")
    delivery = Node("estimate_delivery", "delivery", "Delivery", ("stock",), "Delivery(stock.count % 5 + 1)")
    return Graph("diamond", (stock, delivery), (TITLE, "stock", "delivery"), {TITLE: "Dune"})


def _chain(n: int) -> Graph:
    nodes = [Node("r01", "v01", "int", (TITLE,), "len(title) + 1")]
    for i in range(2, n + 1):
        nodes.append(Node(f"r{i:02d}", f"v{i:02d}", "int", (f"v{i - 1:02d}",), f"v{i - 1:02d} + {i}"))
    return Graph(f"chain{n}", tuple(nodes), (TITLE, nodes[-1].value), {TITLE: "Dune"})


def _fan_in(n: int) -> Graph:
    nodes = tuple(
        Node(f"r{i:02d}", f"v{i:02d}", "int", (TITLE,), f"len(title) + {i}") for i in range(1, n + 1)
    )
    return Graph(f"fanin{n}", nodes, (TITLE, *(x.value for x in nodes)), {TITLE: "Dune"})


def _random_dag(n: int, seed: int) -> Graph:
    """n resolvers; each reads 0-3 earlier ones (0 means it reads the title); the tool reads every sink."""
    rng = random.Random(seed)
    nodes: list[Node] = []
    consumed: set[str] = set()
    for i in range(n):
        k = min(i, rng.choice((0, 1, 1, 2, 2, 3)))
        parents = sorted(rng.sample(range(i), k))
        inputs = tuple(f"v{p:02d}" for p in parents)
        if not inputs or rng.random() < 0.2:
            inputs = (TITLE, *inputs)
        consumed.update(inputs)
        terms = ["len(title)" if x == TITLE else x for x in inputs]
        body = " + ".join([*terms, str(i)])
        nodes.append(Node(f"r{i:02d}", f"v{i:02d}", "int", inputs, body))
    sinks = tuple(x.value for x in nodes if x.value not in consumed)
    return Graph(f"dag{n}", tuple(nodes), (TITLE, *sinks), {TITLE: "Dune"})


def all_graphs() -> tuple[Graph, ...]:
    return (_none(), _one(), _diamond(), _chain(10), _fan_in(10), _random_dag(50, seed=20260728))


def count_paths(graph: Graph) -> int:
    """How many tool-to-resolver paths the graph has (what a walker without memo-before-recurse visits)."""
    paths: dict[str, int] = {}
    for node in reversed(graph.nodes):
        paths[node.value] = 0
    for value in graph.tool_inputs:
        if value != TITLE:
            paths[value] += 1
    for node in reversed(graph.nodes):
        for x in node.inputs:
            if x != TITLE:
                paths[x] += paths[node.value]
    return sum(paths.values())


ParamRenderer = Callable[[Node | None, str], str]
"""(consumer node or None for the tool, input value name) -> parameter declaration text."""


def render(
    graph: Graph,
    *,
    is_async: bool,
    param: ParamRenderer,
    decorator: str = "",
    tool_decorator: str = "",
) -> str:
    """Source defining every resolver of `graph` and a `tool`, parameters spelled by `param`."""
    kw = "async def" if is_async else "def"
    lines: list[str] = []
    for node in graph.nodes:
        params = ", ".join(param(node, x) for x in node.inputs)
        if decorator:
            lines.append(decorator)
        lines += [f"{kw} {node.fn}({params}) -> {node.type}:", f"    return {node.body}", ""]
    params = ", ".join(param(None, x) for x in graph.tool_inputs)
    if tool_decorator:
        lines.append(tool_decorator)
    lines += [f"{kw} tool({params}) -> tuple:", f"    return {graph.tool_body}", ""]
    return "\n".join(lines)


def execute(source: str, namespace: Mapping[str, Any], module: str) -> dict[str, Any]:
    """Run generated source in a fresh namespace (whose functions report `module` as theirs)."""
    scope: dict[str, Any] = {"__name__": module, "Stock": Stock, "Delivery": Delivery, **namespace}
    # dont_inherit: this module's `from __future__ import annotations` must not turn the
    # generated annotations into strings; they are evaluated as written.
    exec(compile(source, f"<{module}>", "exec", dont_inherit=True), scope)
    return scope
