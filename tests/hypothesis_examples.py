"""How many examples a property test tries: the count it asks for, scaled by the profile in force.

Hypothesis's default profile (and its `ci` profile) try 100 examples, and so every test its own
count; `--hypothesis-profile=quick` (registered in tests/conftest.py) tries 10, and so every test
a tenth of its count (at least one), for a quick local run.
"""

from __future__ import annotations

from hypothesis import settings

DEFAULT_EXAMPLES = 100


def examples(count: int) -> int:
    """`count` under the default profile, scaled like `max_examples` under another."""
    return max(1, count * settings().max_examples // DEFAULT_EXAMPLES)  # settings(): the profile in force
