"""What a registered tool keeps alive: every object a server keeps per tool is one more for each
garbage collection to visit while it lives, so registration keeps few."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Annotated, Any

from mcpdi import MCPServer, Resolve

TOOLS = 20


def _tools(count: int) -> list[Callable[..., Any]]:
    """Tools of three resolvers each (`a(title)`, `b(a)`, `c(title, b)`), all distinct functions."""
    source = "\n".join(
        f"async def a{i}(title: str) -> int:\n    return len(title)\n"
        f"async def b{i}(a: Annotated[int, Resolve(a{i})]) -> int:\n    return a + 1\n"
        f"async def c{i}(title: str, b: Annotated[int, Resolve(b{i})]) -> int:\n    return b + 2\n"
        f"async def fn{i}(\n"
        f"    title: str, a: Annotated[int, Resolve(a{i})], c: Annotated[int, Resolve(c{i})]\n"
        f") -> int:\n"
        f"    return a + c\n"
        for i in range(count)
    )
    scope: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve}
    exec(compile(source, "<footprint>", "exec", dont_inherit=True), scope)
    for fn in [value for value in scope.values() if callable(value) and hasattr(value, "__code__")]:
        assert fn.__annotations__  # created on first read: the function's, not the registration's
    return [scope[f"fn{i}"] for i in range(count)]


def _kept_by(root: object, older: set[int]) -> list[object]:
    """The objects the garbage collector tracks that `root` reaches and that are younger than `older`."""
    kept: dict[int, object] = {}
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in kept or id(obj) in older or not gc.is_tracked(obj):
            continue
        kept[id(obj)] = obj
        todo += gc.get_referents(obj)
    return list(kept.values())


def _register(mcp: MCPServer, tools: list[Callable[..., Any]]) -> None:
    for i, fn in enumerate(tools):
        mcp.tool(name=f"fn{i}")(fn)


def test_a_tool_with_three_resolvers_keeps_at_most_forty_two_objects_the_collector_visits() -> None:
    mcp = MCPServer("footprint")
    tools = _tools(TOOLS)
    gc.collect()
    older = {id(obj) for obj in gc.get_objects()}
    _register(mcp, tools)
    gc.collect()
    gc.collect()  # a tuple of untracked items is untracked by the collection after theirs
    entries = [mcp._registry.tools[f"fn{i}"] for i in range(TOOLS)]  # pyright: ignore[reportPrivateUsage]
    kept = [len(_kept_by(entry, older)) for entry in entries]
    assert max(kept) <= 42, kept
