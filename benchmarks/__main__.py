"""`python -m benchmarks`: run the benchmark layers and print their tables (Markdown).

By default every layer a goal is judged on: registration through the public decorators,
cold start over stdio, HTTP (in-process app CPU and requests per second with uvicorn, on
both uvicorn stacks), sync resolvers offloaded against one thread hop, the engine against
hand-written calls, and how costs grow (`scaling`). The run ends with one summary table:
every goal, the figure of this run it was judged on, and met or missed. `--only` picks
layers, including the compile, in-memory `tools/call` and state layers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from benchmarks import (
    cold_start,
    concurrency,
    decorators,
    engine,
    http,
    machine,
    memory,
    offload,
    profiling,
    registration,
    scaling,
    shapes,
    state,
    summary,
)
from benchmarks.graphs import VARIANTS, Variant, all_graphs
from benchmarks.peers import all_impls

LAYERS = (
    "registration",
    "cold-start",
    "http",
    "offload",
    "engine",
    "shapes",
    "scaling",
    "compile",
    "memory",
    "state",
)
DEFAULT_LAYERS = ("registration", "cold-start", "http", "offload", "engine", "shapes", "scaling")
HTTP_STACKS = ("plain", "standard")  # asyncio + h11, then uvloop + httptools


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter blocks, fewer tools")
    parser.add_argument(
        "--only",
        action="append",
        choices=LAYERS,
        help=f"layer(s) to run (default: {', '.join(DEFAULT_LAYERS)})",
    )
    parser.add_argument(
        "--graph", action="append", help="graph name(s): none, one, diamond, chain10, fanin10, dag50"
    )
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="variant(s)")
    parser.add_argument("--impl", action="append", help="implementation(s) besides the hand-written baseline")
    parser.add_argument("--repeats", type=int, help="repeats per implementation (default 31, quick 9)")
    parser.add_argument(
        "--block-ms", type=float, help="target duration of one timed block (default 5, quick 3)"
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        help="engine clock (default: CPU time of the loop thread, wall time for sync-offload)",
    )
    parser.add_argument(
        "--tools",
        type=int,
        help="tools for the compile and registration layers (default 1000, quick 300 / 100)",
    )
    parser.add_argument(
        "--profile",
        metavar="GRAPH[/VARIANT]",
        help="instead of the tables: cProfile one implementation on one graph (e.g. dag50/sync-inline)",
    )
    parser.add_argument("--profile-impl", default="mcpdi", help="implementation to profile (default mcpdi)")
    return parser.parse_args(argv)


def _engine(args: argparse.Namespace) -> list[summary.Verdict]:
    graphs = [g for g in all_graphs() if not args.graph or g.name in args.graph]
    variants: list[Variant] = [v for v in VARIANTS if not args.variant or v in args.variant]
    impls = [
        i
        for i in all_impls()
        if i.name == engine.BASELINE or (i.name in args.impl if args.impl else i.name != offload.ONE_HOP)
    ]
    if not graphs:
        sys.exit(f"no graph matches {args.graph}")
    repeats = args.repeats or (9 if args.quick else 31)
    block_ms = args.block_ms or (3.0 if args.quick else 5.0)
    print(
        f"## engine: µs per call (min and median of {repeats} interleaved repeats, ~{block_ms:g} ms blocks)\n"
    )
    clock = args.clock or "cpu time of the loop thread (async, sync-inline), wall time (sync-offload)"
    print(f"clock: {clock}\n")
    rows = engine.run(graphs, variants, impls, repeats=repeats, target_s=block_ms / 1000, clock=args.clock)
    print(engine.format_table(rows))
    print()
    print(engine.format_goal(rows))
    print()
    print(concurrency.format_table(concurrency.run(repeats=3 if args.quick else 5)))
    print()
    return [engine.verdict(rows)]


def _compile(args: argparse.Namespace) -> None:
    tools = args.tools or (300 if args.quick else 1000)
    repeats = 1 if args.quick else 3
    print(f"## compile: {tools} tools with 3 resolvers each (min and median of {repeats} runs)\n")
    print(registration.format_table(registration.run(tools=tools, repeats=repeats)))
    print()


def _registration(args: argparse.Namespace) -> None:
    count = args.tools or (100 if args.quick else 1000)
    repeats = 1 if args.quick else 3
    print(
        f"## registration: the public decorators, {count} functions with 3 resolvers each "
        f"(min and median of {repeats} fresh processes; memory in one more)\n"
    )
    print(decorators.format_table(decorators.run(count=count, repeats=repeats)))
    print()


def _cold_start(args: argparse.Namespace) -> list[summary.Verdict]:
    runs = 5 if args.quick else 15
    print(
        f"## cold start: process start to `initialize` answered over stdio (min and median of {runs} processes)\n"
    )
    results = cold_start.run(runs=runs)
    print(cold_start.format_table(results))
    print()
    print(cold_start.beyond_the_floor(results))
    print()
    return [cold_start.verdict(results)]


def _http(args: argparse.Namespace) -> list[summary.Verdict]:
    verdicts: list[summary.Verdict] = []
    for i, stack in enumerate(HTTP_STACKS):
        http.run_http(args.quick, stack=stack, app=i == 0, verdicts=verdicts)
    return verdicts


def _offload(args: argparse.Namespace) -> None:
    repeats = args.repeats or (3 if args.quick else 15)
    block_ms = args.block_ms or (20.0 if args.quick else 100.0)
    print(
        f"## offload: sync resolvers on worker threads against one thread hop "
        f"(wall time, min and median of {repeats} interleaved repeats, ~{block_ms:g} ms blocks)\n"
    )
    print(offload.format_table(offload.run(repeats=repeats, target_s=block_ms / 1000)))
    print()


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse(argv)
    if args.profile:
        print(profiling.profile(args.profile, args.profile_impl))
        return
    layers = args.only or list(DEFAULT_LAYERS)
    started = time.perf_counter()
    print("# mcpdi benchmarks\n")
    print(machine.describe())
    print()
    verdicts: list[summary.Verdict] = []
    for layer in LAYERS:
        if layer not in layers:
            continue
        if layer == "registration":
            _registration(args)
        elif layer == "cold-start":
            verdicts += _cold_start(args)
        elif layer == "offload":
            _offload(args)
        elif layer == "engine":
            verdicts += _engine(args)
        elif layer == "shapes":
            verdicts += shapes.run_shapes(args.quick)
        elif layer == "scaling":
            verdicts += scaling.run_scaling(args.quick)
        elif layer == "compile":
            _compile(args)
        elif layer == "memory":
            memory.run_memory(args.quick)
        elif layer == "state":
            state.run_state(args.quick)
        elif layer == "http":
            verdicts += _http(args)
    if verdicts:
        print(f"## summary: the goals, judged on this run ({machine.load()})\n")
        print(summary.format_table(sorted(verdicts, key=lambda v: v.item)))
        print()
    print(f"(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
