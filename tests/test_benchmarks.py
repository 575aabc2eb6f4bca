"""The benchmark command still runs: every peer agrees with the hand-written result before timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
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
