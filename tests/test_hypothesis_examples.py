"""Every property test's example count goes through `examples()`, so the quick profile can lower it."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import settings
from hypothesis_examples import examples

TESTS = Path(__file__).parent
LITERAL_COUNT = re.compile(r"max_examples=\d")


def test_no_test_fixes_its_example_count_past_the_profile() -> None:
    fixed = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "conftest.py"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if LITERAL_COUNT.search(line)
    ]
    assert fixed == [], "write max_examples=examples(N) (tests/hypothesis_examples.py)"


def test_a_count_scales_with_the_profile_in_force() -> None:
    in_force = settings().max_examples  # 100 by default and on CI, 10 with --hypothesis-profile=quick
    assert [examples(100), examples(500), examples(60)] == [in_force, 5 * in_force, 6 * in_force // 10]
    assert examples(1) == 1
    assert settings.get_profile("quick").max_examples == 10
