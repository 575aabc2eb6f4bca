"""The MCP servers the memory and HTTP layers time: one tool per graph, in each library's idiom.

Every server registers, for each graph of `graphs.py`, a tool named after the graph whose
resolvers are the graph's nodes (all `async def`) and whose body returns the text
`str((title, stock, ...))`. Each library spells the parameters its own way; the function
bodies are identical, so every server answers the same call with the same tool text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from benchmarks.graphs import TITLE, Graph, Node, all_graphs, execute

ParamRenderer = Callable[[Node | None, str], str]
ARGUMENTS: Mapping[str, Any] = {TITLE: "Dune"}
DEFAULT_GRAPHS = ("none", "one", "diamond")


def select_graphs(names: Sequence[str]) -> tuple[Graph, ...]:
    """The graphs of `graphs.py` with these names, in that order."""
    by_name = {g.name: g for g in all_graphs()}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        msg = f"unknown graph(s) {unknown}; known: {list(by_name)}"
        raise SystemExit(msg)
    return tuple(by_name[n] for n in names)


def tool_source(graph: Graph, param: ParamRenderer, *, decorator: str = "") -> str:
    """Source of the graph's resolvers and of `tool`, which returns the text of its inputs."""
    lines: list[str] = []
    for node in graph.nodes:
        params = ", ".join(param(node, x) for x in node.inputs)
        lines += [f"async def {node.fn}({params}) -> {node.type}:", f"    return {node.body}", ""]
    params = ", ".join(param(None, x) for x in graph.tool_inputs)
    if decorator:
        lines.append(decorator)
    lines += [f"async def tool({params}) -> str:", f"    return str({graph.tool_body})", ""]
    return "\n".join(lines)


def hand_tool(graph: Graph) -> Callable[[Mapping[str, Any]], Awaitable[str]]:
    """The same functions called in order by straight-line code: `arguments -> tool text`."""
    lines = [
        tool_source(graph, lambda _node, x: x),
        "async def hand(arguments):",
        f"    {TITLE} = arguments['{TITLE}']",
    ]
    lines += [f"    {n.value} = await {n.fn}({', '.join(n.inputs)})" for n in graph.nodes]
    lines.append(f"    return await tool({', '.join(graph.tool_inputs)})")
    return execute("\n".join(lines), {}, "bench_hand_tool")["hand"]


def expected_text(graph: Graph) -> str:
    """The tool text every server must answer for `ARGUMENTS` (computed by the hand-written call)."""
    import asyncio

    async def call() -> str:
        return await hand_tool(graph)(ARGUMENTS)

    return asyncio.run(call())
