"""The benchmark command still runs: every peer agrees with the hand-written result before timing."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

# The engine and offload tables compare mcpdi with peers that only the bench extra installs.
PEERS = ("fastmcp", "fast_depends", "fastapi")
needs_the_peers = pytest.mark.skipif(
    any(find_spec(peer) is None for peer in PEERS),
    reason="the benchmark peers (fastmcp, fast-depends, fastapi) come with the bench extra",
)


@pytest.mark.slow
@needs_the_peers
@pytest.mark.parametrize("variant", ["async", "sync-inline"])
def test_the_engine_benchmark_runs_every_peer_and_prints_the_ratio(variant: str) -> None:
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "engine", "--graph", "diamond"]
    done = subprocess.run(
        [*command, "--variant", variant], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "ERROR" not in done.stdout
    assert f"diamond / {variant}: " in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith(f"| diamond | {variant} |")]
    impls = {row.split("|")[3].strip() for row in rows}
    assert {"hand", "mcpdi", "fastmcp", "fast-depends"} <= impls


def _run(*arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows(table: str, first_cell: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in table.splitlines()
        if line.startswith(f"| {first_cell}")
    ]


@pytest.mark.slow
def test_the_registration_benchmark_times_every_decorator_in_fresh_processes() -> None:
    table = _run("benchmarks.decorators", "--count", "20", "--repeats", "1", "--lib", "mcpdi", "--lib", "mcp")
    measured = {(row[0], row[1]): row for row in _rows(table, "`@server.")}
    assert set(measured) == {
        (decorator, lib)
        for decorator in ("`@server.tool()`", "`@server.prompt()`", "`@server.resource(uri)`")
        for lib in ("mcpdi", "mcp")
    }
    for decorator in ("`@server.tool()`", "`@server.prompt()`", "`@server.resource(uri)`"):
        mcpdi_row = measured[decorator, "mcpdi"]
        assert float(mcpdi_row[2]) > 0, mcpdi_row
        assert float(mcpdi_row[4]) > 0, mcpdi_row
    assert float(measured["`@server.tool()`", "mcp"][2]) > 0
    assert measured["`@server.tool()`", "mcpdi"][5].endswith("×")
    # mcp 2.3.0 refuses a template whose function has more parameters than the URI: reported, not raised.
    assert (
        "ERROR: ValueError: Mismatch between URI parameters" in measured["`@server.resource(uri)`", "mcp"][4]
    )


@pytest.mark.slow
def test_the_cold_start_benchmark_times_both_bookshops_to_their_initialize_answer() -> None:
    table = _run("benchmarks.cold_start", "--runs", "1")
    names = {"mcpdi", "mcpdi run", "mcp", "python", "mcp_types"}
    rows = {row[0]: row for row in _rows(table, "") if row[0] in names}
    assert set(rows) == names
    for name in ("mcpdi", "mcpdi run", "mcp", "mcp_types"):
        assert float(rows[name][3]) > float(rows["python"][3]), rows[name]
    assert rows["mcp"][4] == "1.00×"
    assert re.search(r"mcpdi beyond `import mcp_types` \(medians\): -?\d+ ms of its \d+ ms start", table)


def test_a_server_that_never_answers_is_reported_with_its_last_words() -> None:
    from benchmarks.cold_start import Server, once

    silent = Server("silent", "exits at once", ("-c", "import sys; sys.exit('no stdio server here')"))
    with pytest.raises(RuntimeError) as raised:
        once(silent, timeout=30)
    assert str(raised.value) == "silent never answered initialize (exit status 1): no stdio server here"


@pytest.mark.slow
@needs_the_peers
def test_the_offload_benchmark_compares_mcpdi_with_one_thread_hop() -> None:
    table = _run("benchmarks", "--quick", "--only", "offload")
    rows = _rows(table, "")
    impls = {(row[0], row[1]) for row in rows if len(row) == 6}
    for graph in ("chain10", "fanin10", "dag50"):
        assert {(graph, "hand"), (graph, "hand-1hop"), (graph, "mcpdi"), (graph, "mcp")} <= impls
    one_hop = [row for row in rows if row[1] == "hand-1hop"]
    assert all(row[5] == "1.00×" for row in one_hop), one_hop
    assert "ERROR" not in table


def test_every_shape_runs_in_generated_code_and_answers_what_its_hand_written_code_answers() -> None:
    import anyio

    from benchmarks.shapes import ARGUMENTS, SHAPES, _hand, _is_generated, _plan

    assert "call-scoped, adapted input" in SHAPES
    for shape in SHAPES:
        plan = _plan(shape)
        assert _is_generated(plan), shape
        assert anyio.run(plan.run, ARGUMENTS) == anyio.run(_hand(shape), ARGUMENTS), shape


def test_linearity_judges_growth_per_unit_and_names_the_size_where_it_bends() -> None:
    from benchmarks.summary import linearity

    flat = linearity([10, 100, 1000], [50.0, 120.0, 1000.0])  # fixed cost first: dearer per unit at 10
    assert flat.linear
    assert flat.describe("µs per x") == "linear (µs per x 10: 5, 100: 1.2, 1,000: 1)"
    bent = linearity([10, 100, 1000], [10.0, 100.0, 10_000.0])  # quadratic from 100 on
    assert bent.bend == 1000
    assert bent.describe("µs per x").startswith("bends at 1,000 (")
    edge = linearity([1, 2], [1.0, 3.0])  # exactly 1.5× per unit is still linear
    assert edge.linear


def test_the_summary_table_counts_met_missed_and_unmeasured_goals() -> None:
    from benchmarks.summary import Verdict, format_table, not_measured

    table = format_table(
        [
            Verdict("1", "fast", "0.4×", True),
            Verdict("2", "faster", "0.9×", False),
            not_measured("3", "x", "why"),
        ]
    )
    assert "| 1 | fast | 0.4× | met |" in table
    assert "| 2 | faster | 0.9× | MISSED |" in table
    assert "| 3 | x | why | not measured |" in table
    assert table.endswith("1 met, 1 missed, 1 not measured")


def test_a_peers_row_is_shown_but_not_counted_as_a_goal() -> None:
    from benchmarks.scaling import SizeRow, _linear_verdicts
    from benchmarks.summary import format_table

    def row(size: int, impl: str, median_us: float) -> SizeRow:
        return SizeRow(size=size, impl=impl, min_us=median_us, median_us=median_us)

    rows = [row(100, "mcpdi", 100), row(1000, "mcpdi", 1000), row(100, "mcp", 100), row(1000, "mcp", 5000)]
    mine, peer = _linear_verdicts("4", "registration", rows, "tool", ("mcpdi", "mcp"))
    assert (mine.met, mine.reference) == (True, False)
    assert (peer.met, peer.reference) == (False, True)
    table = format_table([mine, peer])
    peer_line = "| registration linear (mcp) | bends at 1,000 (µs per tool 100: 1, 1,000: 5) |"
    assert f"{peer_line} reference (does not hold) |" in table
    assert table.endswith("1 met, 0 missed, 0 not measured (1 reference rows for the peers, not counted)")


def test_http_goals_take_the_worst_cell_of_each_era() -> None:
    from benchmarks.http import Cell, cell_verdicts

    def cell(c: int, target: str, rps: float, cpu: float) -> Cell:
        return Cell("none", c, target, rps=[rps], cpu_us=[cpu])

    cells = [
        cell(1, "mcpdi legacy", 2000, 150),
        cell(16, "mcpdi legacy", 3000, 200),
        cell(1, "mcp legacy", 900, 400),
        cell(16, "mcp legacy", 1000, 500),
        cell(1, "starlette", 5000, 100),
        cell(16, "starlette", 6000, 100),
    ]
    legacy = [v for v in cell_verdicts(cells, "plain") if "legacy" in v.goal]
    ceiling, vs_mcp = legacy
    assert ceiling.met is False
    assert ceiling.figure == "worst 2.00× (none, c=16; best 1.50×)"
    assert vs_mcp.met is True
    # The cell's ceiling is said beside it: bare Starlette's req/s over mcp's there.
    bound = "bare Starlette 5.56× mcp's there"
    assert vs_mcp.figure == f"worst 2.22× (none, c=1, median req/s; best 3.00×; {bound})"
    modern = [v for v in cell_verdicts(cells, "plain") if "modern" in v.goal]
    assert [v.met for v in modern] == [None, None]  # no modern cell measured: said, not judged
    without_ceiling = [c for c in cells if c.target != "starlette"]
    _, vs_mcp = [v for v in cell_verdicts(without_ceiling, "plain") if "legacy" in v.goal]
    assert vs_mcp.figure == "worst 2.22× (none, c=1, median req/s; best 3.00×)"  # no ceiling: no bound said
