"""`python -m benchmarks`: run the benchmark layers and print their tables (Markdown)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from benchmarks import concurrency, engine, http, machine, memory, profiling, registration, state
from benchmarks.graphs import VARIANTS, Variant, all_graphs
from benchmarks.peers import all_impls

LAYERS = ("engine", "compile", "memory", "http", "state")
DEFAULT_LAYERS = ("engine", "compile")


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter blocks (~30 s)")
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
    parser.add_argument("--tools", type=int, help="tools for the compile layer (default 1000, quick 300)")
    parser.add_argument(
        "--profile",
        metavar="GRAPH[/VARIANT]",
        help="instead of the tables: cProfile one implementation on one graph (e.g. dag50/sync-inline)",
    )
    parser.add_argument("--profile-impl", default="mcpdi", help="implementation to profile (default mcpdi)")
    return parser.parse_args(argv)


def _engine(args: argparse.Namespace) -> None:
    graphs = [g for g in all_graphs() if not args.graph or g.name in args.graph]
    variants: list[Variant] = [v for v in VARIANTS if not args.variant or v in args.variant]
    impls = [i for i in all_impls() if i.name == engine.BASELINE or not args.impl or i.name in args.impl]
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


def _compile(args: argparse.Namespace) -> None:
    tools = args.tools or (300 if args.quick else 1000)
    repeats = 1 if args.quick else 3
    print(f"## compile: {tools} tools with 3 resolvers each (min and median of {repeats} runs)\n")
    print(registration.format_table(registration.run(tools=tools, repeats=repeats)))
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
    for layer in LAYERS:
        if layer not in layers:
            continue
        if layer == "engine":
            _engine(args)
        elif layer == "compile":
            _compile(args)
        elif layer == "memory":
            memory.run_memory(args.quick)
        elif layer == "state":
            state.run_state(args.quick)
        else:
            http.run_http(args.quick)
    print(f"(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
