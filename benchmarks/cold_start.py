"""Cold start: a fresh server process, from start to its answer to the first `initialize` over stdio.

Rows: mcpdi serving `examples/bookshop.py` (`python examples/bookshop.py`, its `mcp.run()`
on stdio, and `mcpdi run examples/bookshop.py`), `mcp` 2.3.0 serving its twin
(`benchmarks/servers/sdk_bookshop.py`, the same tools, resolvers and models), the bare
interpreter (`python -c pass`: the floor no server goes under) and `python -c 'import
mcp_types'`: the package import every server of the wire types pays before its first line
(`mcp_types/__init__` builds the version-superset models and their adapters), the floor of
both libraries. The line under the table gives mcpdi's start beyond that floor. Each run: the clock starts, the process is spawned with the
`initialize` request already written to its stdin, and the clock stops when a line with
the answer (`"id": 1` and a `result`) arrives on its stdout; stdin is then closed and the
process reaped. Runs alternate between the rows (hyperfine-style: min and median of N fresh
processes each, after one unmeasured warm-up run per row that fills the OS file cache).
mcpdi's bytecode is written first (`compile_bytecode`), as an installed wheel has it.

`--importtime` prints, instead, where one server's start goes by `python -X importtime`:
the top-level imports by cumulative time, and the time the largest packages took in all.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.summary import Verdict, not_measured

_ROOT = Path(__file__).parent.parent
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    what: str
    argv: tuple[str, ...]
    answers: bool = True  # False: the floor row, which only starts and exits


SERVERS = (
    Server("mcpdi", "python examples/bookshop.py", ("examples/bookshop.py",)),
    Server(
        "mcpdi run",
        "mcpdi run examples/bookshop.py (the command, as `python -m mcpdi_transport`)",
        ("-m", "mcpdi_transport", "run", "examples/bookshop.py"),
    ),
    Server(
        "mcp",
        "python benchmarks/servers/sdk_bookshop.py (its twin for mcp 2.3.0)",
        ("benchmarks/servers/sdk_bookshop.py",),
    ),
    Server("python", "python -c pass (interpreter start and exit)", ("-c", "pass"), answers=False),
    Server(
        "mcp_types",
        "python -c 'import mcp_types' (the wire types' package, pydantic with it, and exit)",
        ("-c", "import mcp_types"),
        answers=False,
    ),
)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH", "")]))
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def once(server: Server, *, timeout: float = 60.0, extra: Sequence[str] = ()) -> tuple[float, str]:
    """Seconds from spawn to the `initialize` answer (to exit for the floor row), and the process's stderr."""
    request = (json.dumps(_INITIALIZE) + "\n").encode()
    with (
        tempfile.TemporaryFile() as errors
    ):  # a file, not a pipe: -X importtime writes more than a pipe holds
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, *extra, *server.argv],
            cwd=_ROOT,
            env=_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        elapsed: float | None = None
        try:
            with contextlib.suppress(BrokenPipeError):  # a process that died at once: reported below
                process.stdin.write(request)
                process.stdin.flush()
            if not server.answers:
                process.wait(timeout)
                elapsed = time.perf_counter() - start
            deadline = start + timeout
            while elapsed is None and time.perf_counter() < deadline:
                line = process.stdout.readline()
                if not line:
                    break
                message = json.loads(line)
                if message.get("id") == 1 and "result" in message:
                    elapsed = time.perf_counter() - start
            with contextlib.suppress(BrokenPipeError):
                process.stdin.close()
            process.wait(timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    if elapsed is None:
        tail = (stderr.strip().splitlines() or ["no stderr"])[-1]
        msg = f"{server.name} never answered initialize (exit status {process.returncode}): {tail}"
        raise RuntimeError(msg)
    return elapsed, stderr


@dataclass(frozen=True, slots=True)
class Result:
    server: Server
    seconds: tuple[float, ...] = ()
    error: str = ""


def compile_bytecode() -> None:
    """Write the bytecode of mcpdi's packages, as installing a wheel does for `mcp`'s.

    Without it a checkout run under `PYTHONDONTWRITEBYTECODE` compiles every mcpdi module from
    source on each start (about 160 ms more here) while the SDK's installed modules load theirs.
    """
    for package in ("mcpdi", "mcpdi_transport"):
        compileall.compile_dir(_ROOT / package, quiet=1)


def run(*, runs: int, servers: Sequence[Server] = SERVERS) -> list[Result]:
    compile_bytecode()
    samples: dict[str, list[float]] = {s.name: [] for s in servers}
    errors: dict[str, str] = {}
    for repeat in range(runs + 1):
        for server in servers:
            if server.name in errors:
                continue
            try:
                elapsed, _ = once(server)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                errors[server.name] = str(exc)
                continue
            if repeat:  # the first round only warms the file cache
                samples[server.name].append(elapsed)
    return [Result(s, tuple(samples[s.name]), errors.get(s.name, "")) for s in servers]


def format_table(results: Sequence[Result]) -> str:
    lines = [
        "| impl | process | min ms | median ms | × mcp (median) | over bare python (median ms) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    medians = {r.server.name: statistics.median(r.seconds) for r in results if r.seconds}
    for r in results:
        if not r.seconds:
            lines.append(f"| {r.server.name} | {r.server.what} | n/a | n/a | | ({r.error or 'no runs'}) |")
            continue
        median = medians[r.server.name]
        ratio = f"{median / medians['mcp']:.2f}×" if "mcp" in medians and r.server.answers else ""
        floor = (
            f"{(median - medians['python']) * 1000:.0f}" if "python" in medians and r.server.answers else ""
        )
        lines.append(
            f"| {r.server.name} | {r.server.what} | {min(r.seconds) * 1000:.0f} | {median * 1000:.0f} "
            f"| {ratio} | {floor} |"
        )
    return "\n".join(lines)


def beyond_the_floor(results: Sequence[Result]) -> str:
    """What mcpdi's median start spends beyond `import mcp_types`, in ms and as a share of the start."""
    medians = {r.server.name: statistics.median(r.seconds) for r in results if r.seconds}
    if "mcpdi" not in medians or "mcp_types" not in medians:
        return "mcpdi beyond `import mcp_types`: not measured"
    start, floor = medians["mcpdi"], medians["mcp_types"]
    return (
        f"mcpdi beyond `import mcp_types` (medians): {(start - floor) * 1000:.0f} ms of its "
        f"{start * 1000:.0f} ms start ({(start - floor) / start:.0%}); the floor is {floor * 1000:.0f} ms"
    )


GOAL = 0.5  # mcpdi's median start at most this times mcp's


def verdict(results: Sequence[Result]) -> Verdict:
    """The cold-start goal, judged on the medians of this run."""
    goal = f"stdio cold start ≤ {GOAL:g}× mcp's (median)"
    by_name = {r.server.name: r for r in results}
    mine, sdk = by_name.get("mcpdi"), by_name.get("mcp")
    if mine is None or sdk is None or not mine.seconds or not sdk.seconds:
        return not_measured("2", goal, (mine and mine.error) or (sdk and sdk.error) or "not run")
    a, b = statistics.median(mine.seconds), statistics.median(sdk.seconds)
    return Verdict("2", goal, f"{a / b:.2f}× (mcpdi {a * 1000:.0f} ms, mcp {b * 1000:.0f} ms)", a / b <= GOAL)


def _parse_importtime(stderr: str) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, indented name) per line of `-X importtime` output."""
    rows: list[tuple[int, int, str]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|", 2)
        rows.append((int(own), int(cumulative), name.rstrip()[1:]))
    return rows


def importtime(server: Server, *, top: int = 15) -> str:
    """The top-level imports by cumulative time, and each top package's total, for one start of `server`."""
    compile_bytecode()
    elapsed, stderr = once(server, extra=("-X", "importtime"))
    rows = _parse_importtime(stderr)
    top_level = sorted(((c, n) for _, c, n in rows if not n.startswith(" ")), reverse=True)
    packages: dict[str, int] = {}
    for own, _, name in rows:
        root = name.strip().split(".")[0]
        packages[root] = packages.get(root, 0) + own
    lines = [
        f"### {server.name}: `-X importtime` of one start ({elapsed * 1000:.0f} ms to the answer with importtime on)",
        "",
        "| top-level import | cumulative ms |",
        "| --- | ---: |",
    ]
    lines += [f"| `{name}` | {cumulative / 1000:.1f} |" for cumulative, name in top_level[:top]]
    lines += ["", "| package (all its modules, self time) | ms |", "| --- | ---: |"]
    ranked = sorted(packages.items(), key=lambda item: item[1], reverse=True)
    lines += [f"| `{name}` | {own / 1000:.1f} |" for name, own in ranked[:top]]
    lines.append(f"| (all imports) | {sum(packages.values()) / 1000:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_start", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="measured processes per row (default 15)")
    parser.add_argument(
        "--importtime", action="store_true", help="the import breakdown of mcpdi and mcp instead"
    )
    args = parser.parse_args(argv)
    if args.importtime:
        for server in (s for s in SERVERS if s.name in {"mcpdi", "mcp"}):
            print(importtime(server))
            print()
        return
    results = run(runs=args.runs)
    print(format_table(results))
    print()
    print(beyond_the_floor(results))


if __name__ == "__main__":
    main()
