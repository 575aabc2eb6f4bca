"""The README's first command: the bookshop demo prints the transcript of both eras and exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).parent.parent / "examples" / "demo.py"
DECLINED = (
    "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: "
    "elicitation was decline"
)


@pytest.mark.slow
def test_the_demo_drives_the_bookshop_in_both_eras_and_exits_zero() -> None:
    done = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    eras = done.stdout.split("=== protocol era: ")[1:]
    assert [era.split(" ===")[0] for era in eras] == ["legacy", "2026-07-28"]
    for era in eras:
        assert '{"properties": {"title": {"title": "Title", "type": "string"}}, "required": ["title"]' in era
        assert "Reserved 'Dune' (6 copies left)." in era
        assert "Backordered 'Neuromancer'; it ships in 2-3 weeks." in era
        assert f"-> isError {DECLINED}" in era
    assert "INFO:" not in done.stdout
