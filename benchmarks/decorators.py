"""Whole public registration per tool: `@mcp.tool()`, `@mcp.prompt()`, `@mcp.resource(uri)`.

Each library registers N functions of the compile layer's shape (`a(title)`, `b(a)`,
`c(title, b)`, `fn(title, a, c)`, all distinct) through its own decorator on one server:
mcpdi's `MCPServer`, `mcp` 2.3.0's `MCPServer` (its `Resolve` markers) and fastmcp's
`FastMCP` (its `Depends`, resolvers read the title with `CallArgument()`). A resource is a
template `res://bookI/{title}`. Every measurement runs in a fresh interpreter
(`python -m benchmarks.decorators --worker LIB KIND N MODE`), so no cache of an earlier
registration helps a later one; in that process the library is imported and two throwaway
functions are registered on another server first (first-use imports stay out of the
figure), the N functions are created, then the clock runs around the N registrations.
Time: CPU time of the thread, everything alive before frozen out of the garbage collector.
Memory: what tracemalloc sees still allocated after the registrations (server kept alive),
in its own fresh process.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import thread_time_ns
from typing import Any

LIBS = ("mcpdi", "mcp", "fastmcp")
KINDS = ("tool", "prompt", "resource")
_ROOT = Path(__file__).parent.parent


def _source(lib: str, kind: str, count: int, first: int = 0) -> str:
    def dep(fn: str) -> str:
        return f"int = Depends({fn})" if lib == "fastmcp" else f"Annotated[int, Resolve({fn})]"

    title_in_resolver = "title: str = CallArgument()" if lib == "fastmcp" else "title: str"
    returns = "int" if kind == "tool" else "str"
    body = "a + c" if kind == "tool" else "title * (a + c)"
    parts = []
    for i in range(first, first + count):
        parts.append(
            f"async def a{i}({title_in_resolver}) -> int:\n    return len(title)\n"
            f"async def b{i}(a: {dep(f'a{i}')}) -> int:\n    return a + 1\n"
            f"async def c{i}({title_in_resolver}, b: {dep(f'b{i}')}) -> int:\n    return b + 2\n"
            f"async def fn{i}(title: str, a: {dep(f'a{i}')}, c: {dep(f'c{i}')}) -> {returns}:\n"
            f'    """Item {i}."""\n'
            f"    return {body}\n"
        )
    return "\n".join(parts)


def _functions(lib: str, kind: str, count: int, first: int = 0) -> list[Any]:
    from typing import Annotated

    scope: dict[str, Any] = {"__name__": f"bench_{lib}_{kind}", "Annotated": Annotated}
    if lib == "mcpdi":
        from mcpdi import Resolve

        scope["Resolve"] = Resolve
    elif lib == "mcp":
        from mcp.server.mcpserver.resolve import Resolve

        scope["Resolve"] = Resolve
    else:
        from fastmcp.dependencies import CallArgument, Depends

        scope |= {"Depends": Depends, "CallArgument": CallArgument}
    exec(compile(_source(lib, kind, count, first), f"<bench_{lib}>", "exec", dont_inherit=True), scope)
    return [scope[f"fn{i}"] for i in range(first, first + count)]


def _server(lib: str) -> Any:
    if lib == "mcpdi":
        from mcpdi import MCPServer

        return MCPServer("bench")
    if lib == "mcp":
        from mcp.server.mcpserver import MCPServer as SdkServer

        return SdkServer("bench")
    from fastmcp import FastMCP

    return FastMCP("bench")


def _registrar(lib: str, kind: str, server: Any) -> Callable[[int, Any], Any]:
    """`register(i, fn)` through the library's public decorator."""
    if kind == "tool":
        return lambda i, fn: server.tool(name=f"fn{i}")(fn)
    if kind == "prompt":
        return lambda i, fn: server.prompt(name=f"fn{i}")(fn)
    return lambda i, fn: server.resource(f"res://book{i}/{{title}}", name=f"fn{i}")(fn)


def worker(lib: str, kind: str, count: int, mode: str) -> float:
    """µs per registration (`time`) or retained KiB per registration (`memory`), in this process."""
    warm_server = _server(lib)
    warm = _registrar(lib, kind, warm_server)
    for i, fn in enumerate(_functions(lib, kind, 2, first=count)):
        warm(count + i, fn)
    fns = _functions(lib, kind, count)
    server = _server(lib)
    register = _registrar(lib, kind, server)
    gc.collect()
    if mode == "time":
        gc.freeze()
        start = thread_time_ns()
        for i, fn in enumerate(fns):
            register(i, fn)
        elapsed = thread_time_ns() - start
        gc.unfreeze()
        return elapsed / count / 1000
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i, fn in enumerate(fns):
        register(i, fn)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count / 1024


@dataclass(frozen=True, slots=True)
class Result:
    lib: str
    kind: str
    us_per_item: tuple[float, ...] = ()
    kib_per_item: float = 0.0
    error: str = ""


def _fresh(lib: str, kind: str, count: int, mode: str) -> float:
    command = [sys.executable, "-m", "benchmarks.decorators", "--worker", lib, kind, str(count), mode]
    done = subprocess.run(command, cwd=_ROOT, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(last)
    return float(json.loads(done.stdout)["value"])


def run(
    *,
    count: int,
    repeats: int,
    libs: Sequence[str] = LIBS,
    kinds: Sequence[str] = KINDS,
    memory: bool = True,
) -> list[Result]:
    results: list[Result] = []
    for kind in kinds:
        times: dict[str, list[float]] = {lib: [] for lib in libs}
        errors: dict[str, str] = {}
        for _ in range(repeats):  # interleaved: each repeat runs every library once
            for lib in libs:
                if lib in errors:
                    continue
                try:
                    times[lib].append(_fresh(lib, kind, count, "time"))
                except RuntimeError as exc:
                    errors[lib] = str(exc)
        for lib in libs:
            if lib in errors:
                results.append(Result(lib, kind, error=errors[lib]))
                continue
            if not memory:
                results.append(Result(lib, kind, tuple(times[lib])))
                continue
            try:
                kib = _fresh(lib, kind, count, "memory")
            except RuntimeError as exc:
                results.append(Result(lib, kind, error=str(exc)))
                continue
            results.append(Result(lib, kind, tuple(times[lib]), kib))
    return results


def format_table(results: Sequence[Result]) -> str:
    lines = [
        "| decorator | impl | min µs/item | median µs/item | retained KiB/item | mcpdi ÷ mcp (median µs / KiB) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    by_key = {(r.lib, r.kind): r for r in results}
    for r in results:
        decorator = f"`@server.{r.kind}()`" if r.kind != "resource" else "`@server.resource(uri)`"
        if r.error:
            lines.append(f"| {decorator} | {r.lib} | n/a | n/a | n/a (ERROR: {r.error}) | |")
            continue
        ratio = ""
        sdk = by_key.get(("mcp", r.kind))
        if r.lib == "mcpdi" and sdk is not None and not sdk.error:
            time_ratio = statistics.median(r.us_per_item) / statistics.median(sdk.us_per_item)
            ratio = f"{time_ratio:.2f}× / {r.kib_per_item / sdk.kib_per_item:.2f}×"
        lines.append(
            f"| {decorator} | {r.lib} | {min(r.us_per_item):.0f} | {statistics.median(r.us_per_item):.0f} "
            f"| {r.kib_per_item:.1f} | {ratio} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.decorators", description=__doc__)
    parser.add_argument("--worker", nargs=4, metavar=("LIB", "KIND", "N", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=1000, help="registrations per process (default 1000)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per cell (default 3)")
    parser.add_argument("--lib", action="append", choices=LIBS, help="libraries (default all)")
    parser.add_argument("--kind", action="append", choices=KINDS, help="decorators (default all)")
    args = parser.parse_args(argv)
    if args.worker:
        lib, kind, count, mode = args.worker
        print(json.dumps({"value": worker(lib, kind, int(count), mode)}))
        return
    results = run(count=args.count, repeats=args.repeats, libs=args.lib or LIBS, kinds=args.kind or KINDS)
    print(format_table(results))


if __name__ == "__main__":
    main()
