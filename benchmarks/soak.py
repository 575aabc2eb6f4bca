"""Soak: many `tools/call` at high concurrency over HTTP in both eras; errors, speed, memory.

`python -m benchmarks.soak [--calls 10000] [--concurrency 64]` serves `examples/bookshop.py`
with `serve_http` (uvicorn on 127.0.0.1, a free port) in a child process and drives it with
the mcpdi client: half the calls are `order_book("Dune")` (in stock, answered at once), half
`order_book("Neuromancer")` (out of stock: one elicitation round, answered "yes"). Per era it
prints errors, calls per second, p50/p99 latency of a whole call (its rounds included), and
the server's CPU time per call (the figure least moved by other load) and its resident
memory before and after. Client and server share this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from mcpdi_transport import Client

ROOT = Path(__file__).resolve().parent.parent
_SERVE = """
import os
import secrets
import signal
import sys
import tracemalloc
from functools import partial
import anyio
sys.path.insert(0, {examples!r})
from bookshop import mcp
from mcpdi import RequestStateSecurity
from mcpdi_transport import serve_http

state_ttl = os.environ.get("SOAK_STATE_TTL")
if state_ttl:
    mcp.request_state = RequestStateSecurity(keys=[secrets.token_hex(32)], ttl=float(state_ttl))

snapshots = os.environ.get("SOAK_SNAPSHOTS")
if snapshots:
    tracemalloc.start(8)
    taken = [0]

    def dump(signum, frame):
        taken[0] += 1
        tracemalloc.take_snapshot().dump(f"{{snapshots}}.{{taken[0]}}")
        print(tracemalloc.get_traced_memory()[0], flush=True)

    signal.signal(signal.SIGUSR1, dump)

async def main():
    async with anyio.create_task_group() as group:
        port = await group.start(partial(serve_http, mcp, "127.0.0.1", 0, log_level="error"))
        print(port, flush=True)

anyio.run(main)
"""


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _say_yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


_EXPECTED = {
    "Dune": "Ordered 'Dune'.",
    "Neuromancer": "Backordered 'Neuromancer'; it ships in 2-3 weeks.",
}


async def _drive(
    url: str, mode: str, calls: int, concurrency: int
) -> tuple[int, float, list[float], list[str]]:
    """Run `calls` calls from `concurrency` clients; (errors, seconds, latencies, first errors)."""
    remaining = calls
    latencies: list[float] = []
    problems: list[str] = []

    async def worker() -> None:
        try:
            await calls_of_one_client()
        except Exception as error:  # a client that cannot connect is an error, not the end
            problems.append(f"connecting: {type(error).__name__}: {error}")

    async def calls_of_one_client() -> None:
        nonlocal remaining
        client = Client(url, mode=mode, elicitation_callback=_say_yes, discover_timeout=120)  # type: ignore[arg-type]
        async with client:
            while remaining > 0:
                remaining -= 1
                title = "Neuromancer" if remaining % 2 else "Dune"
                started = time.perf_counter()
                try:
                    with anyio.fail_after(60):
                        result = await client.call_tool("order_book", {"title": title})
                    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                    if result.is_error or text != _EXPECTED[title]:
                        problems.append(f"{title}: {text!r}")
                except Exception as error:  # counted, not raised: the soak goes on
                    problems.append(f"{title}: {type(error).__name__}: {error}")
                latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return len(problems), time.perf_counter() - started, latencies, problems[:5]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _print_growth(first: str, last: str) -> None:
    """The allocation sites whose live bytes grew most between two snapshots."""
    import tracemalloc

    grown = tracemalloc.Snapshot.load(last).compare_to(tracemalloc.Snapshot.load(first), "lineno")
    grown.sort(key=lambda stat: stat.size_diff, reverse=True)
    print("\n| allocation site | grew KiB | live KiB | blocks grew |\n|---|---:|---:|---:|")
    for stat in grown[:12]:
        frame = stat.traceback[0]
        site = f"{Path(frame.filename).name}:{frame.lineno}"
        print(f"| {site} | {stat.size_diff / 1024:.1f} | {stat.size / 1024:.1f} | {stat.count_diff} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1, help="run both eras this many times (memory trend)")
    parser.add_argument(
        "--tracemalloc",
        metavar="PREFIX",
        help="trace the server's allocations; after each era print the traced bytes, at the end the "
        "allocation sites that grew most from the first era's end to the last (snapshots in PREFIX.N)",
    )
    parser.add_argument(
        "--state-ttl",
        type=float,
        metavar="SECONDS",
        help="seal requestState for this long instead of 600 s: the used ids the replay store keeps "
        "until their token expires (one per finished elicitation round) level off within the run",
    )
    arguments = parser.parse_args()
    script = _SERVE.format(examples=str(ROOT / "examples"))
    env = {
        **os.environ,
        "SOAK_SNAPSHOTS": arguments.tracemalloc or "",
        "SOAK_STATE_TTL": "" if arguments.state_ttl is None else str(arguments.state_ttl),
    }
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=ROOT, env=env)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/mcp"
        anyio.run(_drive, url, "legacy", 200, 8)  # warm up both paths before the first reading
        anyio.run(_drive, url, "2026-07-28", 200, 8)
        print(
            f"{arguments.calls} calls per era, concurrency {arguments.concurrency}, half with an elicitation round\n"
        )
        print(
            "| era | errors | calls/s | p50 ms | p99 ms | server CPU ms/call | RSS before MiB | RSS after MiB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        details: dict[str, list[str]] = {}
        eras = (("2025-11-25 (handshake)", "legacy"), ("2026-07-28", "2026-07-28")) * arguments.rounds
        for number, (label, mode) in enumerate(eras):
            if arguments.rounds > 1:
                label = f"{label}, run {number // 2 + 1}"
            before = _rss_kib(server.pid)
            cpu_before = _cpu_seconds(server.pid)
            errors, seconds, latencies, problems = anyio.run(
                _drive, url, mode, arguments.calls, arguments.concurrency
            )
            after = _rss_kib(server.pid)
            cpu_ms = (_cpu_seconds(server.pid) - cpu_before) * 1000 / max(1, len(latencies))
            details[label] = problems
            traced = ""
            if arguments.tracemalloc:
                server.send_signal(signal.SIGUSR1)
                traced = f" {int(server.stdout.readline()) / 2**20:.2f} MiB traced |"
            print(
                f"| {label} | {errors} | {len(latencies) / seconds:.0f} | "
                f"{statistics.median(latencies) * 1000:.1f} | {_percentile(latencies, 0.99) * 1000:.1f} | "
                f"{cpu_ms:.2f} | {before / 1024:.1f} | {after / 1024:.1f} |{traced}"
            )
        for label, problems in details.items():
            for problem in problems:
                print(f"- {label}: {problem}")
        print(json.dumps({"final_rss_mib": round(_rss_kib(server.pid) / 1024, 1)}))
        if arguments.tracemalloc and len(eras) > 2:  # from the end of the first run of both eras
            _print_growth(f"{arguments.tracemalloc}.2", f"{arguments.tracemalloc}.{len(eras)}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
