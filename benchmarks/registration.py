"""The compile layer: registration time and retained memory per tool, 3 resolvers each.

mcpdi: `compile_plan(tool)`. mcp 2.3.0: `MCPServer.add_tool(tool)` (which also builds the
pydantic argument model and JSON schema, work mcpdi does in its MCP layer, not the engine).
Fresh functions every run, created before the clock starts. Time is CPU time of the
thread (a shared machine stretches wall time), with everything alive before frozen out of
the garbage collector (so collections triggered by registering see what registering made,
not the benchmark process's other imports). Memory is what tracemalloc sees still
allocated after the registrations (in a separate run, tracemalloc slows code).
"""

from __future__ import annotations

import functools
import gc
import statistics
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import thread_time_ns
from typing import Annotated, Any

from benchmarks.graphs import Delivery, Stock


@functools.cache
def _code(tools: int, stringified: bool) -> Any:
    """Compiled once; every exec of it makes fresh functions (and fresh `Resolve` markers)."""
    source = ("from __future__ import annotations\n" if stringified else "") + _source(tools)
    return compile(source, "<bench_compile>", "exec", dont_inherit=True)


def _functions(tools: int, resolve: type, stringified: bool) -> list[Any]:
    scope: dict[str, Any] = {"__name__": "bench_compile", "Annotated": Annotated, "Resolve": resolve}
    scope |= {"Stock": Stock, "Delivery": Delivery}
    exec(_code(tools, stringified), scope)
    return [scope[f"tool{i}"] for i in range(tools)]


def _source(tools: int) -> str:
    parts = []
    for i in range(tools):
        parts.append(
            f"async def a{i}(title: str) -> int:\n    return len(title)\n"
            f"async def b{i}(a: Annotated[int, Resolve(a{i})]) -> int:\n    return a + 1\n"
            f"async def c{i}(title: str, b: Annotated[int, Resolve(b{i})]) -> int:\n    return b + 2\n"
            f"async def tool{i}(title: str, a: Annotated[int, Resolve(a{i})], c: Annotated[int, Resolve(c{i})]) -> int:\n"
            f"    return a + c\n"
        )
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class Contender:
    name: str
    what: str
    prepare: Callable[[int], Callable[[], list[Any]]]  # makes fresh functions, returns "register them all"


def _mcpdi(stringified: bool) -> Callable[[int], Callable[[], list[Any]]]:
    def prepare(tools: int) -> Callable[[], list[Any]]:
        from mcpdi.engine import Resolve, compile_plan

        fns = _functions(tools, Resolve, stringified)
        return lambda: [compile_plan(fn) for fn in fns]

    return prepare


def _mcp(tools: int) -> Callable[[], list[Any]]:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.resolve import Resolve

    fns = _functions(tools, Resolve, stringified=False)

    def register() -> list[Any]:
        server = MCPServer("bench")
        return [server, *(server.add_tool(fn, name=f"tool{i}") for i, fn in enumerate(fns))]

    return register


CONTENDERS = (
    Contender("mcpdi", "compile_plan(tool)", _mcpdi(stringified=False)),
    Contender(
        "mcpdi",
        "compile_plan(tool), annotations as strings (`from __future__ import annotations`)",
        _mcpdi(stringified=True),
    ),
    Contender("mcp", "MCPServer.add_tool(tool) (incl. argument model + JSON schema)", _mcp),
)


@dataclass(frozen=True, slots=True)
class Result:
    contender: Contender
    us_per_tool: tuple[float, ...] = ()
    kib_per_tool: float = 0.0
    error: str = ""


def _measure(contender: Contender, tools: int, repeats: int) -> Result:
    try:
        warm = contender.prepare(2)
        warm()  # first-use imports and caches stay out of the numbers
        times: list[float] = []
        for _ in range(repeats):
            register = contender.prepare(tools)
            gc.collect()
            gc.freeze()
            try:
                start = thread_time_ns()
                kept = register()
                times.append((thread_time_ns() - start) / tools / 1000)
            finally:
                gc.unfreeze()
            del kept
        register = contender.prepare(tools)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept = register()
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        del kept
        return Result(contender, tuple(times), (after - before) / tools / 1024)
    except Exception as exc:
        return Result(contender, error=f"{type(exc).__name__}: {exc}")


def run(*, tools: int, repeats: int) -> list[Result]:
    return [_measure(c, tools, repeats) for c in CONTENDERS]


def format_table(results: Sequence[Result]) -> str:
    lines = [
        "| impl | registration | min µs/tool | median µs/tool | retained KiB/tool |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.contender.name} | {r.contender.what} | n/a | n/a | n/a ({r.error}) |")
            continue
        lines.append(
            f"| {r.contender.name} | {r.contender.what} | {min(r.us_per_tool):.0f} "
            f"| {statistics.median(r.us_per_tool):.0f} | {r.kib_per_tool:.1f} |"
        )
    return "\n".join(lines)
