"""The state benchmark still runs and prints one row per case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
def test_the_state_benchmark_prints_the_cost_of_a_64_kib_round() -> None:
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "state"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1].strip() for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[1:] == [
        "echo (no state), floor",
        "round with a 2-byte answer, hmac",
        "round with 64 KiB compressible, hmac",
        "round with 64 KiB incompressible, hmac",
        "round with a 2-byte answer, aes-gcm",
        "round with 64 KiB compressible, aes-gcm",
        "round with 64 KiB incompressible, aes-gcm",
        "replay store claim (memory)",
    ]
