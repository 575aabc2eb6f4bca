"""The load benchmark across processes runs end to end (a few calls; the figures come from the script)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_gateway_load_benchmark_drives_every_target_without_errors() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gateway_load", "--calls", "40", "--concurrency", "4"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    rows = [
        line for line in done.stdout.splitlines() if line.startswith("| one") or line.startswith("| nginx")
    ]
    assert [row.split("|")[1].strip() for row in rows] == [
        "one process, 2025-11-25",
        "one process, 2026-07-28",
        "nginx, two processes, 2025-11-25",
        "nginx, two processes, 2026-07-28",
        "nginx, two processes, shared sessions, 2025-11-25",
    ]
    assert all(row.split("|")[2].strip() == "0" for row in rows), done.stdout
