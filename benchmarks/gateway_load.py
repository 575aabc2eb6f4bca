"""Load across processes: the bookshop through nginx to two mcpdi processes, against one process alone.

`python -m benchmarks.gateway_load [--calls 10000] [--concurrency 64]` starts Redis and nginx
from Debian's packages (as the scale-out tests do, on 127.0.0.1 and free ports) and two
processes serving `examples/bookshop.py` with one key ring, a Redis replay store and a
session-id prefix each, behind the tested configuration `examples/deploy/nginx-mcp.conf`.
Half the calls answer at once, half take an elicitation round (`benchmarks/soak.py` drives
them); 2026-07-28 rounds go round-robin over the two, 2025-11-25 sessions stay on theirs.
A second pair shares its 2025-11-25 sessions in the same Redis (`sessions=RedisSessions(...)`)
behind `examples/deploy/nginx-mcp-shared.conf`, round-robin with no pinning.
It prints errors, calls per second and p50/p99 per era, for one process alone and for the
gateways. Clients, nginx, Redis and the servers share this machine's cores.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "scale"))

from scale_services import free_port, nginx, redis_server, stop, wait_for_port  # noqa: E402  # pyright: ignore[reportMissingImports]

from benchmarks.soak import _drive, _percentile  # noqa: E402  # pyright: ignore[reportPrivateUsage]

_SERVE = """
import functools, sys
import anyio
sys.path.insert(0, {examples!r})
from bookshop import mcp
from mcpdi_transport import RedisSessions, serve_http
from mcpdi_transport._workers import configure_state, read_key_ring

configure_state(mcp, read_key_ring(None), {redis!r})
sessions = {{"sessions": RedisSessions({redis!r})}} if {shared!r} else {{"session_id_prefix": {prefix!r}}}
serve = functools.partial(serve_http, mcp, "127.0.0.1", {port}, log_level="error", **sessions)
anyio.run(serve)
"""


def _backend(stack: ExitStack, port: int, prefix: str, redis_url: str, keys: str) -> None:
    shared = prefix.startswith("shared")
    script = _SERVE.format(
        examples=str(ROOT / "examples"), redis=redis_url, port=port, prefix=prefix, shared=shared
    )
    env = {"MCPDI_STATE_KEYS": keys, "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env)
    stack.callback(stop, process)
    wait_for_port(port, process)


def _row(label: str, url: str, mode: str, calls: int, concurrency: int) -> str:
    errors, seconds, latencies, problems = anyio.run(_drive, url, mode, calls, concurrency)
    line = (
        f"| {label} | {errors} | {len(latencies) / seconds:.0f} | "
        f"{statistics.median(latencies) * 1000:.1f} | {_percentile(latencies, 0.99) * 1000:.1f} |"
    )
    return line + "".join(f"\n- {problem}" for problem in problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    arguments = parser.parse_args()
    keys = secrets.token_hex(32)
    with ExitStack() as stack, tempfile.TemporaryDirectory() as workdir:
        redis = stack.enter_context(redis_server())
        names = ("eu1-", "us1-", "alone-", "shared-a", "shared-b")
        ports = {name: free_port() for name in names}
        for prefix, port in ports.items():
            _backend(stack, port, prefix, redis.url, keys)
        gateways = {
            "nginx-mcp.conf": (free_port(), ports["eu1-"], ports["us1-"]),
            "nginx-mcp-shared.conf": (free_port(), ports["shared-a"], ports["shared-b"]),
        }
        for name, (gateway, eu, us) in gateways.items():
            config = (ROOT / "examples" / "deploy" / name).read_text()
            for marker, port in (("{{LISTEN}}", gateway), ("{{EU}}", eu), ("{{US}}", us)):
                config = config.replace(marker, f"127.0.0.1:{port}")
            stack.enter_context(nginx(config, Path(workdir) / name, gateway))
        pinned, shared = gateways["nginx-mcp.conf"][0], gateways["nginx-mcp-shared.conf"][0]
        both = (("2025-11-25", "legacy"), ("2026-07-28", "2026-07-28"))
        targets = {
            "one process": (f"http://127.0.0.1:{ports['alone-']}/mcp", both),
            "nginx, two processes": (f"http://127.0.0.1:{pinned}/mcp", both),
            "nginx, two processes, shared sessions": (f"http://127.0.0.1:{shared}/mcp", both[:1]),
        }
        for url, eras in targets.values():  # warm every path up before the readings
            for _, mode in eras:
                anyio.run(_drive, url, mode, 200, 8)
        print(
            f"{arguments.calls} calls per row, concurrency {arguments.concurrency}, half with an elicitation round\n"
        )
        print("| target, era | errors | calls/s | p50 ms | p99 ms |")
        print("|---|---:|---:|---:|---:|")
        for label, (url, eras) in targets.items():
            for era, mode in eras:
                print(_row(f"{label}, {era}", url, mode, arguments.calls, arguments.concurrency), flush=True)


if __name__ == "__main__":
    main()
