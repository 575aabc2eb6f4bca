"""In-memory `tools/call`: µs per call through the MCP layer, mcpdi against `mcp` 2.3.0, both eras.

One call is one `tools/call` request in, its JSON-RPC response out, with no socket:

| impl | what one call runs |
| --- | --- |
| mcpdi | `await runner.handle(message, connection, peer)` on mcpdi's sans-IO runner (what its transports call per message); the response is already a JSON-ready dict |
| mcpdi Client | `await client.call_tool(...)`, `mcpdi_transport.Client(server, mode=...)` in memory (copies messages through JSON, parses the result into `CallToolResult`) |
| mcp server | `mcp` 2.3.0's server side alone: 2026-07-28 through its per-request path (`DirectDispatcher` + `modern_on_request`, result dict); handshake era through its stream loop (`Server.run` on memory streams, response model dumped to a dict) |
| mcp Client | `await client.call_tool(...)`, `mcp.client.Client(server, mode=...)` in memory (the anchor, ~400 µs) |
| mcpdi call_tool | `await server.call_tool(name, arguments, protocol_version=...)`, the test kit's call (kept-open runner, a `CallToolResult`) |
| mcp call_tool | `await server.call_tool(name, arguments)`, `mcp` 2.3.0's direct call of the tool (no JSON-RPC; the same for both eras) |

Eras: `legacy` (2025-11-25, after one `initialize` on a long-lived connection) and `modern`
(2026-07-28, stateless: every request carries the `_meta` envelope and gets a fresh
connection). Tools are the graphs of `graphs.py` (`servers/`), all functions `async def`.
Timing: `timing.measure` (calibrated blocks of ~25 ms, interleaved repeats, CPU time of the
loop thread; long blocks because the first call after the per-block `gc.collect()` is slow
for everyone). Ratios: mcp's median divided by the row's, against mcp's server side and
against mcp's Client; the goal is judged like for like (runner against server side, Client
against Client). `--profile GRAPH/ERA` prints a cProfile of one case instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.graphs import Graph
from benchmarks.servers import (
    ARGUMENTS,
    DEFAULT_GRAPHS,
    expected_text,
    mcp_server,
    mcpdi_server,
    select_graphs,
)
from benchmarks.timing import Samples, measure

ERAS = ("legacy", "modern")
IMPLS = ("mcpdi", "mcpdi Client", "mcpdi call_tool", "mcp server", "mcp Client", "mcp call_tool")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ENVELOPE: Mapping[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}
GOAL = 5.0

Call = Callable[[Mapping[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Case:
    """One implementation, era and graph: the call and how to read the tool text off its answer."""

    impl: str
    era: str
    graph: str
    call: Call
    text: Callable[[Any], str]


def _dict_text(response: Any) -> str:
    return response["result"]["content"][0]["text"]


def _result_text(result: Any) -> str:
    return result.content[0].text


def _raw_result_text(result: Any) -> str:
    return result["content"][0]["text"]


class _Peer:
    """A transport's `Peer` for one in-memory client that never gets asked anything."""

    headers: Mapping[str, str] | None = None

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        return None

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        msg = f"the benchmark client answers no server requests ({method})"
        raise RuntimeError(msg)


async def _client_cases(
    stack: contextlib.AsyncExitStack, impl: str, graphs: Sequence[Graph], *, legacy: Any, modern: Any
) -> list[Case]:
    """One case per era and graph that calls the tool through a connected client, as a user would."""
    cases: list[Case] = []
    for era, unopened in (("legacy", legacy), ("modern", modern)):
        client = await stack.enter_async_context(unopened)
        for graph in graphs:

            async def via_client(
                arguments: Mapping[str, Any], name: str = graph.name, client: Any = client
            ) -> Any:
                return await client.call_tool(name, dict(arguments))

            cases.append(Case(impl, era, graph.name, via_client, _result_text))
    return cases


async def _mcpdi_cases(stack: contextlib.AsyncExitStack, graphs: Sequence[Graph]) -> list[Case]:
    from mcpdi.lowlevel import Connection

    server = mcpdi_server.build(graphs)
    runner = await stack.enter_async_context(server.running())
    handle = runner.handle
    peer = _Peer()
    ids = itertools.count(1)
    cases: list[Case] = []

    stream = Connection.for_stream()
    hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    answer = await handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, stream, peer)
    if answer is None or "result" not in answer:
        msg = f"mcpdi initialize failed: {answer!r}"
        raise RuntimeError(msg)
    await handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, stream, peer)
    for graph in graphs:
        name = graph.name

        async def legacy(arguments: Mapping[str, Any], name: str = name) -> Any:
            message = {
                "jsonrpc": "2.0",
                "id": next(ids),
                "method": "tools/call",
                "params": {"name": name, "arguments": dict(arguments)},
            }
            return await handle(message, stream, peer)

        async def modern(arguments: Mapping[str, Any], name: str = name) -> Any:
            message = {
                "jsonrpc": "2.0",
                "id": next(ids),
                "method": "tools/call",
                "params": {"name": name, "arguments": dict(arguments), "_meta": dict(ENVELOPE)},
            }
            return await handle(message, Connection.for_modern_request(), peer)

        cases.append(Case("mcpdi", "legacy", name, legacy, _dict_text))
        cases.append(Case("mcpdi", "modern", name, modern, _dict_text))

    for graph in graphs:
        for era, version in (("legacy", LEGACY), ("modern", MODERN)):

            async def direct(
                arguments: Mapping[str, Any], name: str = graph.name, version: str = version
            ) -> Any:
                return await server.call_tool(name, arguments, protocol_version=version)

            cases.append(Case("mcpdi call_tool", era, graph.name, direct, _result_text))
    stack.push_async_callback(server.aclose)

    from mcpdi_transport import Client

    cases += await _client_cases(
        stack,
        "mcpdi Client",
        graphs,
        legacy=Client(server, mode="legacy"),
        modern=Client(server, mode=MODERN),
    )
    return cases


async def _mcp_cases(stack: contextlib.AsyncExitStack, graphs: Sequence[Graph]) -> list[Case]:
    import anyio
    from mcp.client import Client
    from mcp.server.runner import modern_on_request
    from mcp.shared.direct_dispatcher import create_direct_dispatcher_pair
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCNotification, JSONRPCRequest

    server = mcp_server.build(graphs)
    lowlevel = server._lowlevel_server  # what mcp's own in-memory transport serves
    cases: list[Case] = []
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)

    # 2026-07-28, server side: the per-request path mcp's in-memory Client drives, minus the client.
    lifespan_state = await stack.enter_async_context(lowlevel.lifespan(lowlevel))
    client_disp, server_disp = create_direct_dispatcher_pair(raise_handler_exceptions=False)
    stack.callback(server_disp.close)
    await group.start(server_disp.run, modern_on_request(lowlevel, lifespan_state), _ignore_notification)
    await group.start(client_disp.run, _refuse_request, _ignore_notification)
    stack.callback(client_disp.close)
    send_raw = client_disp.send_raw_request

    # Handshake era, server side: mcp's stream loop on memory streams, after one initialize.
    (client_read, client_write), (server_read, server_write) = await stack.enter_async_context(
        create_client_server_memory_streams()
    )
    group.start_soon(
        lambda: lowlevel.run(server_read, server_write, lowlevel.create_initialization_options())
    )
    hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    await client_write.send(
        SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=0, method="initialize", params=hello))
    )
    await client_read.receive()
    await client_write.send(
        SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
    )
    ids = itertools.count(1)

    for graph in graphs:
        name = graph.name

        async def modern(arguments: Mapping[str, Any], name: str = name) -> Any:
            return await send_raw(
                "tools/call", {"name": name, "arguments": dict(arguments), "_meta": dict(ENVELOPE)}
            )

        async def legacy(arguments: Mapping[str, Any], name: str = name) -> Any:
            params = {"name": name, "arguments": dict(arguments)}
            await client_write.send(
                SessionMessage(
                    JSONRPCRequest(jsonrpc="2.0", id=next(ids), method="tools/call", params=params)
                )
            )
            answer = await client_read.receive()
            if isinstance(answer, Exception):
                raise answer
            return answer.message.model_dump(mode="json", by_alias=True, exclude_unset=True)

        # The handshake-era row also builds the request models and dumps the answer (client work,
        # ~5 µs) and hops two memory streams; the mcpdi rows call the runner in-task.
        cases.append(Case("mcp server", "legacy", name, legacy, _dict_text))
        cases.append(Case("mcp server", "modern", name, modern, _raw_result_text))

    for graph in graphs:

        async def direct(arguments: Mapping[str, Any], name: str = graph.name) -> Any:
            return await server.call_tool(name, dict(arguments))

        cases.append(Case("mcp call_tool", "legacy", graph.name, direct, _result_text))
        cases.append(Case("mcp call_tool", "modern", graph.name, direct, _result_text))

    cases += await _client_cases(
        stack, "mcp Client", graphs, legacy=Client(server, mode="legacy"), modern=Client(server, mode=MODERN)
    )
    return cases


async def _ignore_notification(_dctx: Any, _method: str, _params: Mapping[str, Any] | None) -> None:
    return None


async def _refuse_request(_dctx: Any, method: str, _params: Mapping[str, Any] | None) -> dict[str, Any]:
    msg = f"the benchmark client answers no server requests ({method})"
    raise RuntimeError(msg)


class _Host:
    """Owns every server and client for the whole run, inside one long-lived task.

    anyio's task groups and cancel scopes must be left by the task that entered them; the
    timed blocks run as separate tasks on the same loop, so the contexts live here.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, graphs: Sequence[Graph]) -> None:
        self.loop = loop
        self.graphs = graphs
        self.ready: asyncio.Future[tuple[list[Case], dict[str, str]]] = loop.create_future()
        self.stop = asyncio.Event()
        self.task = loop.create_task(self._main())

    async def _main(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            cases: list[Case] = []
            errors: dict[str, str] = {}
            for name, build in (("mcpdi", _mcpdi_cases), ("mcp", _mcp_cases)):
                try:
                    cases += await build(stack, self.graphs)
                except Exception as exc:
                    errors[name] = f"{type(exc).__name__}: {exc}"
            self.ready.set_result((cases, errors))
            await self.stop.wait()

    def start(self) -> tuple[list[Case], dict[str, str]]:
        return self.loop.run_until_complete(self.ready)

    def close(self) -> None:
        self.stop.set()
        self.loop.run_until_complete(self.task)


@dataclass(frozen=True, slots=True)
class Row:
    graph: str
    era: str
    impl: str
    samples: Samples | None
    error: str = ""


def _verify(
    loop: asyncio.AbstractEventLoop, cases: Sequence[Case], expected: Mapping[str, str]
) -> dict[int, str]:
    """Index of each case that does not answer the expected tool text -> why."""
    failures: dict[int, str] = {}
    for i, case in enumerate(cases):
        try:
            answer = loop.run_until_complete(case.call(ARGUMENTS))
            text = case.text(answer)
        except Exception as exc:
            failures[i] = f"{type(exc).__name__}: {exc}"[:160]
            continue
        if text != expected[case.graph]:
            failures[i] = f"tool text {text!r} != {expected[case.graph]!r}"
    return failures


def profile_call(loop: asyncio.AbstractEventLoop, call: Call, *, n: int = 5000, top: int = 35) -> str:
    """cProfile of `n` calls (after a warm-up), the `top` functions by own time, then by cumulative time."""
    import cProfile
    import io
    import pstats

    async def block(count: int) -> None:
        for _ in range(count):
            await call(ARGUMENTS)

    loop.run_until_complete(block(200))
    profiler = cProfile.Profile()
    profiler.enable()
    loop.run_until_complete(block(n))
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def profile_case(graph: str, era: str, impl: str = "mcpdi", *, n: int = 5000) -> str:
    """The cProfile text of one in-memory case (e.g. `one`, `modern`, `mcpdi`)."""
    loop = asyncio.new_event_loop()
    host = _Host(loop, select_graphs([graph]))
    try:
        cases, errors = host.start()
        case = next((c for c in cases if c.graph == graph and c.era == era and c.impl == impl), None)
        if case is None:
            return f"no case {impl} {graph}/{era} ({errors or 'unknown impl or era'})"
        return profile_call(loop, case.call, n=n)
    finally:
        host.close()
        loop.close()


def run_rows(graphs: Sequence[Graph], *, repeats: int, target_s: float) -> list[Row]:
    expected = {g.name: expected_text(g) for g in graphs}
    loop = asyncio.new_event_loop()
    host = _Host(loop, graphs)
    rows: list[Row] = []
    try:
        cases, build_errors = host.start()
        failures = _verify(loop, cases, expected)
        gc.collect()
        gc.freeze()
        for graph in graphs:
            for era in ERAS:
                group = {
                    case.impl: case
                    for i, case in enumerate(cases)
                    if case.graph == graph.name and case.era == era and i not in failures
                }
                failed = {
                    case.impl: failures[i]
                    for i, case in enumerate(cases)
                    if case.graph == graph.name and case.era == era and i in failures
                }
                samples = measure(
                    loop,
                    {impl: case.call for impl, case in group.items()},
                    ARGUMENTS,
                    repeats=repeats,
                    target_s=target_s,
                    clock="cpu",
                )
                for impl in IMPLS:
                    lib = impl.split()[0]
                    if impl in samples:
                        rows.append(Row(graph.name, era, impl, samples[impl]))
                    else:
                        why = failed.get(impl) or build_errors.get(lib, "not built")
                        rows.append(Row(graph.name, era, impl, None, why))
    finally:
        gc.unfreeze()
        host.close()
        loop.close()
    return rows


_PAIRS = {"mcpdi": "mcp server", "mcpdi Client": "mcp Client", "mcpdi call_tool": "mcp call_tool"}
"""Like for like: mcpdi's runner against mcp's server side, client against client."""
_GOALS = {"mcpdi call_tool": 1.0}
"""Per-impl goals other than `GOAL`: the test kit's call may cost as much as mcp's direct call."""


def _ratio(peer: Row | None, row: Row, stat: str) -> str:
    if peer is None or peer.samples is None or row.samples is None:
        return ""
    return f"{getattr(peer.samples, stat) / getattr(row.samples, stat):.2f}×"


def format_table(rows: Sequence[Row]) -> str:
    lines = [
        "| graph | era | impl | min µs | median µs | mcp server ÷ impl (median) | mcp Client ÷ impl (median) "
        "| mcp call_tool ÷ impl (median) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    by_key = {(r.graph, r.era, r.impl): r for r in rows}
    for r in rows:
        if r.samples is None:
            lines.append(f"| {r.graph} | {r.era} | {r.impl} | n/a ({r.error}) | | | | |")
            continue
        mcp_server = by_key.get((r.graph, r.era, "mcp server"))
        mcp_client = by_key.get((r.graph, r.era, "mcp Client"))
        mcp_direct = by_key.get((r.graph, r.era, "mcp call_tool"))
        lines.append(
            f"| {r.graph} | {r.era} | {r.impl} | {r.samples.min:.1f} | {r.samples.median:.1f} | "
            f"{_ratio(mcp_server, r, 'median')} | {_ratio(mcp_client, r, 'median')} | "
            f"{_ratio(mcp_direct, r, 'median')} |"
        )
    return "\n".join(lines)


def format_goal(rows: Sequence[Row]) -> str:
    """The goal: mcpdi's in-memory tools/call at least 5× faster than mcp 2.3.0's, per graph and era.

    Checked like for like (medians): mcpdi's runner against mcp's server side, mcpdi's
    Client against mcp's Client.
    """
    by_key = {(r.graph, r.era, r.impl): r for r in rows}
    misses: list[str] = []
    checked = 0
    for r in rows:
        peer = by_key.get((r.graph, r.era, _PAIRS.get(r.impl, "")))
        if r.samples is None or peer is None or peer.samples is None:
            continue
        checked += 1
        ratio = peer.samples.median / r.samples.median
        if ratio < _GOALS.get(r.impl, GOAL):
            misses.append(f"{r.impl} vs {peer.impl} on {r.graph}/{r.era}: {ratio:.2f}×")
    goal = (
        f"goal (≥ {GOAL:g}× faster than mcp 2.3.0 in memory; medians, runner vs server side, Client vs "
        "Client; call_tool no slower than mcp's call_tool)"
    )
    if not checked:
        return f"{goal}: nothing to compare"
    if not misses:
        return f"{goal}: met on all {checked} pairs"
    return f"{goal}: missed on " + "; ".join(misses)


def run_memory(quick: bool, *, graphs: Sequence[str] | None = None, repeats: int | None = None) -> str:
    """Run the in-memory layer, print its table and return the printed text."""
    selected = select_graphs(graphs or DEFAULT_GRAPHS)
    repeats = repeats or (7 if quick else 15)
    block_ms = 10.0 if quick else 25.0
    started = time.perf_counter()
    rows = run_rows(selected, repeats=repeats, target_s=block_ms / 1000)
    text = "\n".join(
        [
            f"## memory: in-memory tools/call, µs per call (min and median of {repeats} interleaved repeats, "
            f"~{block_ms:g} ms blocks, CPU time of the loop thread)",
            "",
            format_table(rows),
            "",
            format_goal(rows),
            "",
            f"(memory layer: {time.perf_counter() - started:.0f} s)",
            "",
        ]
    )
    print(text)
    return text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.memory", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter blocks")
    parser.add_argument(
        "--graph", action="append", help=f"graph name(s) (default: {', '.join(DEFAULT_GRAPHS)})"
    )
    parser.add_argument("--repeats", type=int, help="repeats per implementation (default 15, quick 7)")
    parser.add_argument(
        "--profile",
        metavar="GRAPH/ERA",
        help="instead of the table: cProfile one case, e.g. one/modern (with --profile-impl)",
    )
    parser.add_argument("--profile-impl", default="mcpdi", choices=IMPLS, help="implementation to profile")
    args = parser.parse_args(argv)
    if args.profile:
        graph, _, era = args.profile.partition("/")
        print(profile_case(graph, era or "modern", args.profile_impl))
        return
    run_memory(args.quick, graphs=args.graph, repeats=args.repeats)


if __name__ == "__main__":
    main()
