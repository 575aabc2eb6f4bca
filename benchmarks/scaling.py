"""How costs grow: each against a size, with `mcp` 2.3.0 beside mcpdi where it does the same.

| table | size | what one sample is |
| --- | --- | --- |
| engine | resolvers in a seeded random DAG (`graphs.py`'s generator): 10, 50, 200, 1,000 | µs per call, async, through the engine layer's `hand`, `mcpdi` and `mcp` rows (CPU time, interleaved) |
| registration | tools: 100, 1,000, 10,000 | µs per `@server.tool()` of the decorator layer's shape, fresh process per sample |
| tools/list | tools: 100, 1,000, 10,000 | µs per 2026-07-28 `tools/list` request in memory: mcpdi's runner, `mcp`'s per-request server path (CPU time, interleaved) |
| requestState | recorded answer: 1 KiB, 64 KiB, 1,000 KiB (base64 noise; 1 MiB is the payload's limit, envelope included) | µs per 2026-07-28 round that opens, checks and re-seals it (the state layer's tool) |
| rounds | questions asked one per round: 1, 2, 4, 8, a 64 KiB answer recorded in the first | µs of the whole call (all its rounds), per round |
| concurrency | keep-alive clients: 1, 4, 16, 64 | uvicorn `tools/call` (graph `none`), req/s and server CPU µs per request |

A cost is linear when, at every size, its cost per unit (µs per resolver, per tool, per
KiB, per round, server CPU per request) is at most `summary.SLACK` (1.5) times the lowest
per-unit cost at a smaller size: fixed costs make the small sizes dearer per unit, so only
growth counts; the first size past that is where it bends.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from time import thread_time_ns
from typing import Annotated, Any

from benchmarks import decorators, engine, graphs
from benchmarks.summary import Linearity, Verdict, is_peer, linearity, not_measured

ENGINE_SIZES = (10, 50, 200, 1000)
TOOL_COUNTS = (100, 1000, 10_000)
STATE_SIZES = (1024, 64 * 1024, 1000 * 1024)  # a requestState's payload is at most 1 MiB in all
ROUNDS = (1, 2, 4, 8)
CONCURRENCY = (1, 4, 16, 64)
LIST_GOAL = 0.5  # tools/list of 10,000 tools: at most this times mcp's time
REGISTRATION_GOAL = 0.15  # registration at 1,000 tools: at most this times mcp's time

Timed = Callable[[], Awaitable[Any]]


def _fmt_us(value: float) -> str:
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


async def _interleaved(
    calls: Mapping[str, Timed], *, repeats: int, target_s: float
) -> dict[str, list[float]]:
    """µs per call of each, CPU time of this thread: blocks of ~`target_s`, in rotated order."""
    sizes: dict[str, int] = {}
    for name, call in calls.items():
        await call()  # warm: first uses build what is cached
        start = thread_time_ns()
        await call()
        once = max(thread_time_ns() - start, 1)
        sizes[name] = max(1, round(target_s * 1e9 / once))
    names = list(calls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in [*names[shift:], *names[:shift]]:
            n, call = sizes[name], calls[name]
            gc.collect()
            start = thread_time_ns()
            for _ in range(n):
                await call()
            samples[name].append((thread_time_ns() - start) / n / 1000)
    return samples


# -- engine: µs per call against resolver count ---------------------------------------------


@dataclass(frozen=True, slots=True)
class SizeRow:
    size: int
    impl: str
    min_us: float
    median_us: float
    error: str = ""


def run_engine(*, repeats: int, target_s: float, sizes: Sequence[int] = ENGINE_SIZES) -> list[SizeRow]:
    from benchmarks.peers import all_impls

    impls = [i for i in all_impls() if i.name in ("hand", "mcpdi", "mcp")]
    dags = [graphs._random_dag(n, seed=20260728) for n in sizes]
    rows: list[SizeRow] = []
    for got in engine.run(dags, ["async"], impls, repeats=repeats, target_s=target_s, progress=False):
        size = int(got.graph.removeprefix("dag"))
        if got.samples is None:
            rows.append(SizeRow(size, got.impl, 0.0, 0.0, got.note))
        else:
            rows.append(SizeRow(size, got.impl, got.samples.min, got.samples.median))
    return rows


def _linear_of(rows: Sequence[SizeRow], impl: str) -> Linearity | None:
    mine = sorted((r for r in rows if r.impl == impl and not r.error), key=lambda r: r.size)
    if len(mine) < 2:
        return None
    return linearity([r.size for r in mine], [r.median_us for r in mine])


def format_size_table(rows: Sequence[SizeRow], size_label: str, unit: str) -> str:
    lines = [
        f"| {size_label} | impl | min µs | median µs | median µs per {unit} | ÷ mcp (median) |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    by_key = {(r.size, r.impl): r for r in rows}
    for r in rows:
        if r.error:
            lines.append(f"| {r.size:,} | {r.impl} | n/a ({r.error}) | | | |")
            continue
        sdk = by_key.get((r.size, "mcp"))
        ratio = f"{r.median_us / sdk.median_us:.3f}×" if sdk and not sdk.error and r.impl != "mcp" else ""
        lines.append(
            f"| {r.size:,} | {r.impl} | {_fmt_us(r.min_us)} | {_fmt_us(r.median_us)} "
            f"| {r.median_us / r.size:.3f} | {ratio} |"
        )
    return "\n".join(lines)


def _linear_verdicts(
    item: str, what: str, rows: Sequence[SizeRow], unit: str, impls: Sequence[str]
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for impl in impls:
        judged = _linear_of(rows, impl)
        goal = f"{what} linear ({impl})"
        if judged is None:
            verdicts.append(
                not_measured(item, goal, "fewer than two sizes measured", reference=is_peer(impl))
            )
        else:
            figure = judged.describe(f"µs per {unit}")
            verdicts.append(Verdict(item, goal, figure, judged.linear, is_peer(impl)))
    return verdicts


def _engine_verdicts(rows: Sequence[SizeRow]) -> list[Verdict]:
    """Judged against the hand-written call of the same size: its cost per resolver grows too on
    large graphs (more code than the CPU caches hold), which is the machine's, not the engine's."""
    hand = {r.size: r for r in rows if r.impl == "hand" and not r.error}
    verdicts: list[Verdict] = []
    for impl in ("mcpdi", "mcp"):
        goal = f"engine time vs resolver count linear ({impl}, as × the hand-written call)"
        mine = sorted(
            (r for r in rows if r.impl == impl and not r.error and r.size in hand), key=lambda r: r.size
        )
        if len(mine) < 2:
            verdicts.append(not_measured("4", goal, "fewer than two sizes measured", reference=is_peer(impl)))
            continue
        judged = linearity(
            [r.size for r in mine], [r.size * r.median_us / hand[r.size].median_us for r in mine]
        )
        figure = judged.describe("× hand at", lambda x: f"{x:.2f}")
        verdicts.append(Verdict("4", goal, figure, judged.linear, is_peer(impl)))
    return verdicts


# -- registration: µs per tool against tool count -------------------------------------------


def run_registration(*, repeats: int, counts: Sequence[int] = TOOL_COUNTS) -> list[SizeRow]:
    rows: list[SizeRow] = []
    for count in counts:
        for result in decorators.run(
            count=count, repeats=repeats, libs=("mcpdi", "mcp"), kinds=("tool",), memory=False
        ):
            if result.error:
                rows.append(SizeRow(count, result.lib, 0.0, 0.0, result.error))
            else:
                per = result.us_per_item
                rows.append(SizeRow(count, result.lib, min(per) * count, statistics.median(per) * count))
    return rows


# -- tools/list: µs per request against tool count ------------------------------------------


def _register_all(lib: str, count: int) -> Any:
    server = decorators._server(lib)
    register = decorators._registrar(lib, "tool", server)
    for i, fn in enumerate(decorators._functions(lib, "tool", count)):
        register(i, fn)
    return server


async def _list_calls(stack: contextlib.AsyncExitStack, count: int) -> dict[str, Timed]:
    import anyio
    from mcp.server.runner import modern_on_request
    from mcp.shared.direct_dispatcher import create_direct_dispatcher_pair

    from benchmarks.memory import ENVELOPE
    from mcpdi.testing import InMemoryClient

    runner = await stack.enter_async_context(_register_all("mcpdi", count).running())
    client = InMemoryClient(runner)

    async def mcpdi_list() -> Any:
        return (await client.send("tools/list"))["result"]["tools"]

    lowlevel = _register_all("mcp", count)._lowlevel_server
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)
    lifespan_state = await stack.enter_async_context(lowlevel.lifespan(lowlevel))
    client_disp, server_disp = create_direct_dispatcher_pair(raise_handler_exceptions=False)
    stack.callback(server_disp.close)

    async def ignore(*_args: Any) -> None:
        return None

    await group.start(server_disp.run, modern_on_request(lowlevel, lifespan_state), ignore)
    await group.start(client_disp.run, ignore, ignore)
    stack.callback(client_disp.close)

    async def mcp_list() -> Any:
        return (await client_disp.send_raw_request("tools/list", {"_meta": dict(ENVELOPE)}))["tools"]

    return {"mcpdi": mcpdi_list, "mcp": mcp_list}


def run_tools_list(*, repeats: int, target_s: float, counts: Sequence[int] = TOOL_COUNTS) -> list[SizeRow]:
    async def main() -> list[SizeRow]:
        rows: list[SizeRow] = []
        for count in counts:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    calls = await _list_calls(stack, count)
                    for name, call in calls.items():
                        listed = await call()
                        if len(listed) != count:
                            msg = f"{name} listed {len(listed)} tools, not {count}"
                            raise RuntimeError(msg)
                    samples = await _interleaved(calls, repeats=repeats, target_s=target_s)
                except Exception as exc:
                    why = f"{type(exc).__name__}: {exc}"[:200]
                    rows += [SizeRow(count, impl, 0.0, 0.0, why) for impl in ("mcpdi", "mcp")]
                    continue
                rows += [
                    SizeRow(count, name, min(values), statistics.median(values))
                    for name, values in samples.items()
                ]
        return rows

    return asyncio.run(main())


# -- requestState: µs per round against the recorded answer's size, and rounds per call -----


def _noise(size: int) -> str:
    import base64
    import random

    return base64.b64encode(random.Random(7).randbytes(size)).decode()[:size]


def _chain_server(questions: int) -> Any:
    """A tool asking `questions` names one after the other (each question reads the answer before)."""
    from benchmarks.state import KEY, Name
    from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve

    mcp = MCPServer(
        "Bench", request_state=RequestStateSecurity([KEY], single_use=False, max_token_size=4 << 20)
    )
    scope: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve, "Elicit": Elicit, "Name": Name}
    lines = ["async def q0() -> Elicit[Name]:", "    return Elicit('Name 0?', Name)"]
    for i in range(1, questions):
        lines += [
            f"async def q{i}(before: Annotated[Name, Resolve(q{i - 1})]) -> Elicit[Name]:",
            f"    return Elicit('Name {i}?', Name)",
        ]
    lines += [
        f"async def chain(last: Annotated[Name, Resolve(q{questions - 1})]) -> str:",
        "    return last.name[:8]",
    ]
    exec(compile("\n".join(lines), "<bench_chain>", "exec", dont_inherit=True), scope)
    mcp.tool()(scope["chain"])
    return mcp


async def _drive(client: Any, answer_sizes: Sequence[int]) -> tuple[int, int]:
    """One whole call, answering each round's question with a name of the next size: (rounds, last token chars)."""
    params: dict[str, Any] = {"name": "chain", "arguments": {}}
    rounds = chars = 0
    sizes = iter(answer_sizes)
    while True:
        rounds += 1
        result = (await client.send("tools/call", params))["result"]
        if "inputRequests" not in result:
            if result.get("isError"):
                msg = f"the chain tool failed: {result}"
                raise RuntimeError(msg)
            return rounds, chars
        (key,) = result["inputRequests"]
        chars = len(result["requestState"])
        answer = {"action": "accept", "content": {"name": _noise(next(sizes))}}
        params = {**params, "inputResponses": {key: answer}, "requestState": result["requestState"]}


@dataclass(frozen=True, slots=True)
class StateRows:
    by_size: list[SizeRow]  # size in KiB; µs per round re-sealing that answer
    by_rounds: list[SizeRow]  # size in rounds; µs per whole call


def run_state(*, repeats: int, target_s: float) -> StateRows:
    from mcpdi.testing import InMemoryClient

    async def main() -> StateRows:
        by_size: list[SizeRow] = []
        async with _chain_server(2).running() as runner:
            client = InMemoryClient(runner)
            calls: dict[str, Timed] = {}
            for size in STATE_SIZES:
                first = (await client.send("tools/call", {"name": "chain", "arguments": {}}))["result"]
                (key,) = first["inputRequests"]
                answer = {"action": "accept", "content": {"name": _noise(size)}}
                second = (
                    await client.send(
                        "tools/call",
                        {
                            "name": "chain",
                            "arguments": {},
                            "inputResponses": {key: answer},
                            "requestState": first["requestState"],
                        },
                    )
                )["result"]
                again = {"name": "chain", "arguments": {}, "requestState": second["requestState"]}

                async def one_round(again: Mapping[str, Any] = again) -> Any:
                    return await client.send("tools/call", again)

                calls[str(size)] = one_round
            samples = await _interleaved(calls, repeats=repeats, target_s=target_s)
            for size in STATE_SIZES:
                values = samples[str(size)]
                by_size.append(SizeRow(size // 1024, "mcpdi", min(values), statistics.median(values)))
        by_rounds: list[SizeRow] = []
        whole: dict[str, Timed] = {}
        async with contextlib.AsyncExitStack() as stack:
            for k in ROUNDS:
                runner = await stack.enter_async_context(_chain_server(k).running())
                client = InMemoryClient(runner)
                sizes = [64 * 1024, *([8] * (k - 1))]
                rounds, _chars = await _drive(client, sizes)
                if rounds != k + 1:
                    msg = f"the chain of {k} took {rounds} rounds"
                    raise RuntimeError(msg)

                async def call(client: Any = client, sizes: Sequence[int] = sizes) -> Any:
                    return await _drive(client, sizes)

                whole[str(k)] = call
            samples = await _interleaved(whole, repeats=repeats, target_s=target_s)
        for k in ROUNDS:
            values = samples[str(k)]
            by_rounds.append(SizeRow(k + 1, "mcpdi", min(values), statistics.median(values)))
        return StateRows(by_size, by_rounds)

    return asyncio.run(main())


# -- throughput against concurrency ------------------------------------------------------------


def run_concurrency(*, repeats: int, seconds: float, warmup: float) -> list[Any]:
    from benchmarks import http

    targets = [t for t in http.TARGETS if t.server != "ceiling"]
    return http.run_cells(
        ["none"],
        repeats=repeats,
        seconds=seconds,
        warmup=warmup,
        requests=100_000,
        concurrency=CONCURRENCY,
        targets=targets,
    )


def format_concurrency(cells: Sequence[Any]) -> str:
    lines = [
        "| c | impl | req/s median | server CPU µs/req (median) | p50 µs | p99 µs |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for c in sorted(cells, key=lambda c: (c.target, c.concurrency)):
        if c.failure or not c.rps:
            lines.append(f"| {c.concurrency} | {c.target} | n/a ({c.failure or 'not run'}) | | | |")
            continue
        lines.append(
            f"| {c.concurrency} | {c.target} | {statistics.median(c.rps):,.0f} | {statistics.median(c.cpu_us):.0f} "
            f"| {statistics.median(c.p50):,.0f} | {statistics.median(c.p99):,.0f} |"
        )
    return "\n".join(lines)


def _concurrency_verdicts(cells: Sequence[Any]) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for target in dict.fromkeys(c.target for c in cells):
        mine = sorted((c for c in cells if c.target == target and c.rps), key=lambda c: c.concurrency)
        goal = f"server CPU per request flat in concurrency ({target})"
        if len(mine) < 2:
            why = "fewer than two concurrency levels measured"
            verdicts.append(not_measured("4", goal, why, reference=is_peer(target)))
            continue
        levels = [c.concurrency for c in mine]
        judged = linearity(levels, [statistics.median(c.cpu_us) * c.concurrency for c in mine])
        figure = judged.describe("CPU µs/req at c", lambda x: f"{x:.0f}")
        verdicts.append(Verdict("4", goal, figure, judged.linear, is_peer(target)))
    return verdicts


def _rounds_verdict(rows: Sequence[SizeRow]) -> Verdict:
    """Each round after the first answer is recorded re-seals the same state: judged on the cost of
    the rounds a call adds beyond the shortest one, so the cheap first rounds do not hide growth."""
    goal = "a call's cost vs its rounds linear (each round re-seals a 64 KiB answer)"
    mine = sorted((r for r in rows if not r.error), key=lambda r: r.size)
    if len(mine) < 3:
        return not_measured("4", goal, "fewer than three call lengths measured")
    base = mine[0]
    judged = linearity(
        [r.size - base.size for r in mine[1:]], [r.median_us - base.median_us for r in mine[1:]]
    )
    return Verdict(
        "4",
        goal,
        judged.describe("µs per added round, at added rounds", lambda x: f"{x:,.0f}"),
        judged.linear,
    )


# -- the layer ----------------------------------------------------------------------------------


def _ratio_verdict(
    item: str, goal: str, rows: Sequence[SizeRow], size: int, limit: float, what: str
) -> Verdict:
    by_key = {(r.size, r.impl): r for r in rows}
    mine, sdk = by_key.get((size, "mcpdi")), by_key.get((size, "mcp"))
    if mine is None or sdk is None or mine.error or sdk.error:
        why = (mine and mine.error) or (sdk and sdk.error) or f"{size:,} not measured"
        return not_measured(item, goal, why)
    ratio = mine.median_us / sdk.median_us
    figure = (
        f"{ratio:.3f}× ({what}: mcpdi {_fmt_us(mine.median_us)} µs, mcp {_fmt_us(sdk.median_us)} µs, median)"
    )
    return Verdict(item, goal, figure, ratio <= limit)


def run_scaling(quick: bool) -> list[Verdict]:
    """Print the scaling tables; return the goals they judge."""
    repeats = 5 if quick else 9
    target_s = 0.01 if quick else 0.02
    verdicts: list[Verdict] = []

    print(
        f"## scaling: engine µs per call against resolver count (async; min and median of {repeats} repeats)\n"
    )
    print("  engine sizes", file=sys.stderr, flush=True)
    engine_rows = run_engine(repeats=repeats, target_s=target_s / 4)
    print(format_size_table(engine_rows, "resolvers", "resolver"))
    print()
    verdicts += _engine_verdicts(engine_rows)

    reg_repeats = 1 if quick else 3
    print(
        "## scaling: registration through `@server.tool()` against tool count "
        f"(total µs, min and median of {reg_repeats} fresh processes)\n"
    )
    print("  registration sizes", file=sys.stderr, flush=True)
    reg_rows = run_registration(repeats=reg_repeats)
    print(format_size_table(reg_rows, "tools", "tool"))
    print()
    verdicts.append(
        _ratio_verdict(
            "3",
            f"registration at 1,000 tools ≤ {REGISTRATION_GOAL:g}× mcp's time",
            reg_rows,
            1000,
            REGISTRATION_GOAL,
            "1,000 `@server.tool()` in total",
        )
    )
    verdicts += _linear_verdicts("4", "registration vs tool count", reg_rows, "tool", ("mcpdi", "mcp"))

    print(
        f"## scaling: 2026-07-28 `tools/list` in memory against tool count (min and median of {repeats} repeats)\n"
    )
    print("  tools/list sizes", file=sys.stderr, flush=True)
    list_rows = run_tools_list(repeats=repeats, target_s=target_s)
    print(format_size_table(list_rows, "tools", "tool"))
    print()
    verdicts.append(
        _ratio_verdict(
            "3",
            f"`tools/list` of 10,000 tools ≤ {LIST_GOAL:g}× mcp's time",
            list_rows,
            10_000,
            LIST_GOAL,
            "one request",
        )
    )
    verdicts += _linear_verdicts("4", "`tools/list` vs tool count", list_rows, "tool", ("mcpdi", "mcp"))

    print("  requestState sizes", file=sys.stderr, flush=True)
    try:
        state_rows = run_state(repeats=repeats, target_s=target_s)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"[:200]
        verdicts.append(not_measured("4", "a round's cost vs requestState size linear", why))
        verdicts.append(not_measured("4", "a call's cost vs its rounds linear", why))
    else:
        print(
            "## scaling: one 2026-07-28 round against the size of the answer its requestState records "
            "(HMAC, in memory; mcp 2.3.0 has no sealed request state)\n"
        )
        print(format_size_table(state_rows.by_size, "KiB", "KiB"))
        print()
        print(
            "## scaling: a whole call against its rounds (one question per round, a 64 KiB answer recorded "
            "in the first, every later round re-sealing it)\n"
        )
        print(format_size_table(state_rows.by_rounds, "rounds", "round"))
        print()
        verdicts += _linear_verdicts(
            "4", "a round's cost vs requestState size", state_rows.by_size, "KiB", ("mcpdi",)
        )
        verdicts.append(_rounds_verdict(state_rows.by_rounds))

    http_repeats = 2 if quick else 3
    seconds = 0.4 if quick else 1.0
    print(
        "## scaling: `tools/call` over HTTP against concurrency (uvicorn, asyncio + h11, graph `none`, "
        f"{http_repeats} interleaved repeats of ≤ {seconds:g} s)\n"
    )
    print("  concurrency", file=sys.stderr, flush=True)
    cells = run_concurrency(repeats=http_repeats, seconds=seconds, warmup=0.1 if quick else 0.25)
    print(format_concurrency(cells))
    print()
    verdicts += _concurrency_verdicts(cells)
    return verdicts
