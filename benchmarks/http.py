"""HTTP `tools/call`: requests per second and latency with uvicorn on 127.0.0.1, mcpdi against `mcp` 2.3.0.

Each implementation is served by its own uvicorn process (`servers/run.py`: same settings
for everyone — one worker, asyncio loop, h11 (or, with `--uvicorn standard`, uvloop and
httptools for every server alike), log level warning, no access log), and the
load comes from another process (`loadgen.py`: raw asyncio streams, keep-alive, one
connection per concurrent client), so server and client do not share a GIL.

| row | server | requests |
| --- | --- | --- |
| mcpdi legacy | `mcpdi_transport.build_http_app(server, json_response=True)` | `initialize` once per client, then `tools/call` with `Mcp-Session-Id` |
| mcpdi modern | the same app | stateless POST, `_meta` envelope, `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, JSON reply |
| mcp legacy | `mcp` 2.3.0 `MCPServer.streamable_http_app(json_response=True)` (sessions) | as mcpdi legacy |
| mcp modern | the same app (its stateless 2026-07-28 entry, JSON replies) | as mcpdi modern |
| starlette | a bare Starlette route returning the same JSON-RPC result (`servers/ceiling.py`) | as mcpdi modern |

Every repeat runs every cell (graph × concurrency × row), rows in an order rotated each
repeat. One cell: a warm-up on the same connections, then up to `requests` requests or
`seconds`, whichever comes first. Columns: requests per second (median and best repeat),
median p50/p99 latency, and the server process's CPU time per request (user + system from
/proc, warm-up included; unlike req/s it hardly moves when other processes load the
machine). Ratios, each by median req/s / best req/s / server CPU per request: mcpdi
against mcp of the same era (goal ≥ 2) and bare Starlette against the row (goal ≤ 1.5).

A second table times each app alone, in process (`servers/asgi.py`): CPU µs per request
through the ASGI app with no socket, uvicorn or HTTP parser — the part an implementation
controls, measured with `timing.measure` like the other layers. `--profile GRAPH/ROW`
prints a cProfile of one row's app instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from benchmarks.servers import ARGUMENTS, expected_text, select_graphs
from benchmarks.summary import Verdict, not_measured
from benchmarks.timing import Samples, measure

DEFAULT_GRAPHS = ("none", "one")
CONCURRENCY = (1, 16)
GOAL_VS_MCP = 2.0
GOAL_VS_CEILING = 1.5


@dataclass(frozen=True, slots=True)
class Target:
    label: str
    server: str
    flow: str


TARGETS = (
    Target("mcpdi legacy", "mcpdi", "legacy"),
    Target("mcpdi modern", "mcpdi", "modern"),
    Target("mcp legacy", "mcp", "legacy"),
    Target("mcp modern", "mcp", "modern"),
    Target("starlette", "ceiling", "modern"),
)
_MCP_OF = {"mcpdi legacy": "mcp legacy", "mcpdi modern": "mcp modern"}
_CEILING = "starlette"


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    log: str

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far."""
        with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _serve(name: str, graphs: Sequence[str], logdir: str, stack: str = "plain") -> Iterator[Server]:
    log = os.path.join(logdir, f"{name}.log")
    command = [sys.executable, "-m", "benchmarks.servers.run", name, "--graphs", ",".join(graphs)]
    with open(log, "wb") as err:
        process = subprocess.Popen(
            [*command, "--uvicorn", stack],
            stdout=subprocess.PIPE,
            stderr=err,
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode().split()
        if len(line) != 2 or line[0] != "port":
            process.wait(timeout=10)
            with open(log, encoding="utf-8", errors="replace") as f:
                msg = f"server {name} did not start: {f.read()[-2000:]}"
            raise RuntimeError(msg)
        yield Server(name, process, int(line[1]), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LoadGen:
    """The load generator process, driven one JSON command per line."""

    def __init__(self, stack: ExitStack) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.loadgen"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        stack.callback(self._close)

    def ask(self, command: Mapping[str, Any]) -> dict[str, Any]:
        stdin: IO[str] | None = self.process.stdin
        stdout: IO[str] | None = self.process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(command) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            msg = "the load generator exited"
            raise RuntimeError(msg)
        return json.loads(line)

    def _close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Cell:
    graph: str
    concurrency: int
    target: str
    rps: list[float] = field(default_factory=lambda: [])
    p50: list[float] = field(default_factory=lambda: [])
    p99: list[float] = field(default_factory=lambda: [])
    cpu_us: list[float] = field(default_factory=lambda: [])
    errors: int = 0
    failure: str = ""


def _check(gen: LoadGen, port: int, target: Target, graph: str, expected: str) -> str:
    """'' when the server answers the expected tool text, else why not."""
    answer = gen.ask({"op": "check", "port": port, "flow": target.flow, "tool": graph})
    if "error" in answer:
        return str(answer["error"])[:200]
    try:
        text = json.loads(answer["body"])["result"]["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        return f"HTTP {answer['status']}: {answer['body'][:200]}"
    return "" if text == expected else f"tool text {text!r} != {expected!r}"


def run_cells(
    graphs: Sequence[str],
    *,
    repeats: int,
    seconds: float,
    warmup: float,
    requests: int,
    concurrency: Sequence[int] = CONCURRENCY,
    targets: Sequence[Target] = TARGETS,
    stack: str = "plain",
) -> list[Cell]:
    expected = {g.name: expected_text(g) for g in select_graphs(graphs)}
    cells = {(g, c, t.label): Cell(g, c, t.label) for g in graphs for c in concurrency for t in targets}
    with ExitStack() as exits, tempfile.TemporaryDirectory(prefix="mcpdi-bench-") as logdir:
        servers: dict[str, Server] = {}
        for name in dict.fromkeys(t.server for t in targets):
            try:
                servers[name] = exits.enter_context(_serve(name, graphs, logdir, stack))
            except Exception as exc:
                for cell in cells.values():
                    if any(t.label == cell.target and t.server == name for t in targets):
                        cell.failure = str(exc)[:300]
        gen = LoadGen(exits)
        live: list[tuple[str, Target]] = []
        for g in graphs:
            for t in targets:
                if t.server not in servers:
                    continue
                why = _check(gen, servers[t.server].port, t, g, expected[g])
                if why:
                    for c in concurrency:
                        cells[(g, c, t.label)].failure = why
                else:
                    live.append((g, t))
        for r in range(repeats):
            for g in graphs:
                for c in concurrency:
                    row = [t for gg, t in live if gg == g]
                    shift = r % max(1, len(row))
                    for t in [*row[shift:], *row[:shift]]:
                        server = servers[t.server]
                        cpu_before = server.cpu_seconds()
                        answer = gen.ask(
                            {
                                "op": "run",
                                "port": server.port,
                                "flow": t.flow,
                                "tool": g,
                                "concurrency": c,
                                "requests": requests,
                                "seconds": seconds,
                                "warmup": warmup,
                            }
                        )
                        cpu = server.cpu_seconds() - cpu_before
                        cell = cells[(g, c, t.label)]
                        if "error" in answer:
                            cell.failure = str(answer["error"])[:200]
                            continue
                        cell.rps.append(answer["done"] / answer["elapsed"])
                        cell.p50.append(answer["p50_us"])
                        cell.p99.append(answer["p99_us"])
                        cell.cpu_us.append(cpu * 1e6 / max(1, answer["done"] + answer["warm"]))
                        cell.errors += answer["errors"]
    return list(cells.values())


class _AppHost:
    """Every app's lifespan, held by one long-lived task (anyio scopes must exit where entered)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, graphs: Sequence[str], targets: Sequence[Target]
    ) -> None:
        self.loop = loop
        self.graphs = select_graphs(graphs)
        self.targets = targets
        self.ready: asyncio.Future[tuple[dict[tuple[str, str], Any], dict[str, str]]] = loop.create_future()
        self.stop = asyncio.Event()
        self.task = loop.create_task(self._main())

    async def _main(self) -> None:
        from benchmarks.servers.asgi import enter_app, tool_calls
        from benchmarks.servers.run import app_builder

        calls: dict[tuple[str, str], Any] = {}
        errors: dict[str, str] = {}
        async with contextlib.AsyncExitStack() as stack:
            for server in dict.fromkeys(t.server for t in self.targets):
                try:
                    app = app_builder(server)(self.graphs)
                    logging.getLogger("mcp").setLevel(logging.WARNING)
                    await enter_app(stack, app)
                except Exception as exc:
                    for t in self.targets:
                        if t.server == server:
                            errors[t.label] = f"{type(exc).__name__}: {exc}"[:200]
                    continue
                for t in self.targets:
                    if t.server != server:
                        continue
                    try:
                        for graph, call in (await tool_calls(app, t.flow, self.graphs)).items():
                            calls[(graph, t.label)] = call
                    except Exception as exc:
                        errors[t.label] = f"{type(exc).__name__}: {exc}"[:200]
            self.ready.set_result((calls, errors))
            await self.stop.wait()

    def close(self) -> None:
        self.stop.set()
        self.loop.run_until_complete(self.task)


def run_app_samples(
    graphs: Sequence[str], *, repeats: int, target_s: float, targets: Sequence[Target] = TARGETS
) -> dict[tuple[str, str], Samples | str]:
    """µs of CPU per request through each ASGI app in process, per (graph, row); a str says why not."""
    expected = {g.name: expected_text(g) for g in select_graphs(graphs)}
    loop = asyncio.new_event_loop()
    host = _AppHost(loop, graphs, targets)
    out: dict[tuple[str, str], Samples | str] = {}
    try:
        calls, errors = loop.run_until_complete(host.ready)
        for label, why in errors.items():
            for g in graphs:
                out[(g, label)] = why
        live: dict[tuple[str, str], Any] = {}
        for key, call in calls.items():
            try:
                status, data = loop.run_until_complete(call(ARGUMENTS))
                text = json.loads(data)["result"]["content"][0]["text"]
            except Exception as exc:
                out[key] = f"{type(exc).__name__}: {exc}"[:200]
                continue
            if status != 200 or text != expected[key[0]]:
                out[key] = f"HTTP {status}, tool text {text!r}"[:200]
            else:
                live[key] = call
        gc.collect()
        gc.freeze()
        for g in graphs:
            group = {label: call for (graph, label), call in live.items() if graph == g}
            for label, samples in measure(
                loop, group, ARGUMENTS, repeats=repeats, target_s=target_s, clock="cpu"
            ).items():
                out[(g, label)] = samples
    finally:
        gc.unfreeze()
        host.close()
        loop.close()
    return out


def profile_app(graph: str, label: str, *, n: int = 3000) -> str:
    """cProfile of `n` requests of one row (e.g. `mcpdi modern`) through its ASGI app, in process."""
    from benchmarks.memory import profile_call

    targets = [t for t in TARGETS if t.label == label]
    if not targets:
        return f"no row {label!r}; rows: {[t.label for t in TARGETS]}"
    loop = asyncio.new_event_loop()
    host = _AppHost(loop, [graph], targets)
    try:
        calls, errors = loop.run_until_complete(host.ready)
        if (graph, label) not in calls:
            return f"{label} on {graph} is not available: {errors.get(label, 'unknown graph')}"
        return profile_call(loop, calls[(graph, label)], n=n)
    finally:
        host.close()
        loop.close()


def format_app_table(results: Mapping[tuple[str, str], Samples | str], graphs: Sequence[str]) -> str:
    lines = [
        "| graph | impl | app µs/req min | app µs/req median | mcp ÷ mcpdi (median) | impl ÷ starlette (median) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for g in graphs:
        for t in TARGETS:
            r = results.get((g, t.label))
            if r is None:
                continue
            if isinstance(r, str):
                lines.append(f"| {g} | {t.label} | n/a ({r}) | | | |")
                continue
            vs_mcp = vs_ceiling = ""
            mcp = results.get((g, _MCP_OF.get(t.label, "")))
            if isinstance(mcp, Samples):
                vs_mcp = f"{mcp.median / r.median:.2f}×"
            ceiling = results.get((g, _CEILING))
            if isinstance(ceiling, Samples) and t.label != _CEILING:
                vs_ceiling = f"{r.median / ceiling.median:.2f}×"
            lines.append(f"| {g} | {t.label} | {r.min:.1f} | {r.median:.1f} | {vs_mcp} | {vs_ceiling} |")
    return "\n".join(lines)


def _speedups(cell: Cell, other: Cell) -> tuple[float, float, float]:
    """How many times faster `cell` is than `other`: by median req/s, best req/s, server CPU per request."""
    return (
        _med(cell.rps) / _med(other.rps),
        max(cell.rps) / max(other.rps),
        _med(other.cpu_us) / _med(cell.cpu_us),
    )


def _fmt(ratios: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in ratios)


def format_table(cells: Sequence[Cell]) -> str:
    by_key = {(c.graph, c.concurrency, c.target): c for c in cells}
    lines = [
        "| graph | c | impl | req/s median | req/s best | p50 µs | p99 µs | server CPU µs/req "
        "| × mcp (median / best / CPU) | starlette × impl (median / best / CPU) |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        if c.failure or not c.rps:
            lines.append(
                f"| {c.graph} | {c.concurrency} | {c.target} | n/a ({c.failure or 'not run'}) | | | | | | |"
            )
            continue
        vs_mcp = vs_ceiling = ""
        mcp = by_key.get((c.graph, c.concurrency, _MCP_OF.get(c.target, "")))
        if mcp is not None and mcp.rps:
            vs_mcp = _fmt(_speedups(c, mcp))
        ceiling = by_key.get((c.graph, c.concurrency, _CEILING))
        if ceiling is not None and ceiling.rps and c.target != _CEILING:
            vs_ceiling = _fmt(_speedups(ceiling, c))
        errors = f" ({c.errors} non-200)" if c.errors else ""
        lines.append(
            f"| {c.graph} | {c.concurrency} | {c.target}{errors} | {_med(c.rps):.0f} | {max(c.rps):.0f} | "
            f"{_med(c.p50):.0f} | {_med(c.p99):.0f} | {_med(c.cpu_us):.0f} | {vs_mcp} | {vs_ceiling} |"
        )
    return "\n".join(lines)


def format_goals(cells: Sequence[Cell]) -> str:
    """Each goal, judged three ways: median req/s, best req/s, server CPU per request."""
    by_key = {(c.graph, c.concurrency, c.target): c for c in cells}
    lines = [
        f"goals: mcpdi ≥ {GOAL_VS_MCP:g}× mcp 2.3.0's req/s of the same era, and bare Starlette at most "
        f"{GOAL_VS_CEILING:g}× mcpdi's (each judged by median req/s / best req/s / server CPU per request):",
        "",
    ]
    for c in cells:
        if c.target not in _MCP_OF or not c.rps:
            continue
        mcp = by_key.get((c.graph, c.concurrency, _MCP_OF[c.target]))
        ceiling = by_key.get((c.graph, c.concurrency, _CEILING))
        verdicts: list[str] = []
        if mcp is not None and mcp.rps:
            ratios = _speedups(c, mcp)
            marks = "".join("✓" if x >= GOAL_VS_MCP else "✗" for x in ratios)
            verdicts.append(f"vs mcp {_fmt(ratios)} {marks}")
        if ceiling is not None and ceiling.rps:
            ratios = _speedups(ceiling, c)
            marks = "".join("✓" if x <= GOAL_VS_CEILING else "✗" for x in ratios)
            verdicts.append(f"starlette × {_fmt(ratios)} {marks}")
        lines.append(f"- {c.target}, {c.graph}, c={c.concurrency}: " + "; ".join(verdicts))
    return "\n".join(lines)


ERA_EXTRA_GOAL_US = 5.0  # the 2026-07-28 era's app cost over the handshake era's, at most


def _stack_name(stack: str) -> str:
    return "uvloop + httptools" if stack == "standard" else "asyncio + h11"


def cell_verdicts(cells: Sequence[Cell], stack: str) -> list[Verdict]:
    """Goal 1 over uvicorn: the worst cell of each era, by server CPU (Starlette) and median req/s (mcp)."""
    by_key = {(c.graph, c.concurrency, c.target): c for c in cells}
    verdicts: list[Verdict] = []
    for label, sdk_label in _MCP_OF.items():
        era = label.removeprefix("mcpdi ")
        vs_ceiling: list[tuple[float, str]] = []
        vs_mcp: list[tuple[float, str, float | None]] = []
        for c in cells:
            if c.target != label or not c.rps:
                continue
            where = f"{c.graph}, c={c.concurrency}"
            ceiling = by_key.get((c.graph, c.concurrency, _CEILING))
            if ceiling is not None and ceiling.rps:
                vs_ceiling.append((_med(c.cpu_us) / _med(ceiling.cpu_us), where))
            sdk = by_key.get((c.graph, c.concurrency, sdk_label))
            if sdk is not None and sdk.rps:
                # What bare Starlette reaches against mcp in the same cell: the most any app could.
                bound = _med(ceiling.rps) / _med(sdk.rps) if ceiling is not None and ceiling.rps else None
                vs_mcp.append((_med(c.rps) / _med(sdk.rps), where, bound))
        goal = f"HTTP server CPU/req ≤ {GOAL_VS_CEILING:g}× bare Starlette, {era}, {_stack_name(stack)}"
        if vs_ceiling:
            worst = max(vs_ceiling)
            figure = f"worst {worst[0]:.2f}× ({worst[1]}; best {min(vs_ceiling)[0]:.2f}×)"
            verdicts.append(Verdict("1", goal, figure, worst[0] <= GOAL_VS_CEILING))
        else:
            verdicts.append(not_measured("1", goal, "no cell measured"))
        goal = f"HTTP req/s ≥ {GOAL_VS_MCP:g}× mcp's in every cell, {era}, {_stack_name(stack)}"
        if vs_mcp:
            worst = min(vs_mcp, key=lambda entry: entry[0])
            bound = "" if worst[2] is None else f"; bare Starlette {worst[2]:.2f}× mcp's there"
            best = max(entry[0] for entry in vs_mcp)
            figure = f"worst {worst[0]:.2f}× ({worst[1]}, median req/s; best {best:.2f}×{bound})"
            verdicts.append(Verdict("1", goal, figure, worst[0] >= GOAL_VS_MCP))
        else:
            verdicts.append(not_measured("1", goal, "no cell measured"))
    return verdicts


def app_verdicts(results: Mapping[tuple[str, str], Samples | str], graphs: Sequence[str]) -> list[Verdict]:
    """Goal 1 in process: each era's app against the bare route, and the 2026-07-28 era's extra µs."""
    verdicts: list[Verdict] = []
    for label in _MCP_OF:
        era = label.removeprefix("mcpdi ")
        ratios: list[tuple[float, str]] = []
        for g in graphs:
            mine, ceiling = results.get((g, label)), results.get((g, _CEILING))
            if isinstance(mine, Samples) and isinstance(ceiling, Samples):
                ratios.append((mine.median / ceiling.median, g))
        goal = f"HTTP app alone ≤ {GOAL_VS_CEILING:g}× bare Starlette (CPU µs/req in process), {era}"
        if ratios:
            worst = max(ratios)
            verdicts.append(
                Verdict("1", goal, f"worst {worst[0]:.2f}× (graph {worst[1]})", worst[0] <= GOAL_VS_CEILING)
            )
        else:
            verdicts.append(not_measured("1", goal, "not measured"))
    extras: list[tuple[float, str]] = []
    for g in graphs:
        legacy, modern = results.get((g, "mcpdi legacy")), results.get((g, "mcpdi modern"))
        if isinstance(legacy, Samples) and isinstance(modern, Samples):
            extras.append((modern.median - legacy.median, g))
    goal = f"2026-07-28 app cost over the handshake era's ≤ {ERA_EXTRA_GOAL_US:g} µs/req"
    if extras:
        worst = max(extras)
        verdicts.append(
            Verdict(
                "1",
                goal,
                f"worst {worst[0]:+.1f} µs (graph {worst[1]}, median)",
                worst[0] <= ERA_EXTRA_GOAL_US,
            )
        )
    else:
        verdicts.append(not_measured("1", goal, "not measured"))
    return verdicts


def _med(values: Sequence[float]) -> float:
    return statistics.median(values)


def run_http(
    quick: bool,
    *,
    graphs: Sequence[str] | None = None,
    repeats: int | None = None,
    seconds: float | None = None,
    app: bool = True,
    uvicorn: bool = True,
    stack: str = "plain",
    verdicts: list[Verdict] | None = None,
) -> str:
    """Run the HTTP layer, print its tables and return the printed text (its goals into `verdicts`)."""
    graphs = list(graphs or DEFAULT_GRAPHS)
    select_graphs(graphs)
    repeats = repeats or (2 if quick else 5)
    seconds = seconds or (0.4 if quick else 1.0)
    warmup = 0.1 if quick else 0.25
    requests = 100_000
    started = time.perf_counter()
    parts: list[str] = []
    if uvicorn:
        cells = run_cells(
            graphs, repeats=repeats, seconds=seconds, warmup=warmup, requests=requests, stack=stack
        )
        loop_http = "uvloop + httptools" if stack == "standard" else "asyncio + h11"
        parts += [
            f"## http: tools/call over Streamable HTTP, uvicorn ({loop_http}) on 127.0.0.1 ({repeats} interleaved repeats, "
            f"≤ {seconds:g} s or {requests} requests per cell after a {warmup:g} s warm-up)",
            "",
            format_table(cells),
            "",
            format_goals(cells),
            "",
        ]
        if verdicts is not None:
            verdicts += cell_verdicts(cells, stack)
    if app:
        app_repeats = 7 if quick else 15
        block_ms = 10.0 if quick else 25.0
        results = run_app_samples(graphs, repeats=app_repeats, target_s=block_ms / 1000)
        parts += [
            "### http, app only: CPU µs per request through each ASGI app in process (no socket, no uvicorn, "
            f"no HTTP parser; min and median of {app_repeats} interleaved repeats, ~{block_ms:g} ms blocks)",
            "",
            format_app_table(results, graphs),
            "",
        ]
        if verdicts is not None:
            verdicts += app_verdicts(results, graphs)
    parts += [f"(http layer: {time.perf_counter() - started:.0f} s)", ""]
    text = "\n".join(parts)
    print(text)
    return text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.http", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="2 repeats of 0.4 s cells (~30 s)")
    parser.add_argument(
        "--graph", action="append", help=f"graph name(s) (default: {', '.join(DEFAULT_GRAPHS)})"
    )
    parser.add_argument("--repeats", type=int, help="repeats (default 5, quick 2)")
    parser.add_argument("--seconds", type=float, help="time bound of one cell (default 1, quick 0.4)")
    parser.add_argument("--no-app", action="store_true", help="skip the in-process app-only table")
    parser.add_argument("--app-only", action="store_true", help="only the in-process app-only table")
    parser.add_argument(
        "--uvicorn",
        choices=("plain", "standard"),
        default="plain",
        help="every server on asyncio + h11 (plain, default) or uvloop + httptools (uvicorn[standard])",
    )
    parser.add_argument(
        "--profile",
        metavar="GRAPH/ROW",
        help="instead of the tables: cProfile one row's app in process, e.g. 'one/mcpdi modern'",
    )
    args = parser.parse_args(argv)
    if args.profile:
        graph, _, label = args.profile.partition("/")
        print(profile_app(graph, label or "mcpdi modern"))
        return
    run_http(
        args.quick,
        graphs=args.graph,
        repeats=args.repeats,
        seconds=args.seconds,
        app=not args.no_app,
        uvicorn=not args.app_only,
        stack=args.uvicorn,
    )


if __name__ == "__main__":
    main()
