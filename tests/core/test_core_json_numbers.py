"""`parse_json` refuses a number too large for a double, however it is spelled, and only such a number."""

from __future__ import annotations

import math
import random

import pytest

from mcpdi.lowlevel import MCPError, parse_json


@pytest.mark.parametrize(
    "text",
    [
        '{"n":1e999}',
        '{"n":-1E+400}',
        '{"n":[2.5e0000999]}',
        '{"a":{"b":[0,{"n":7e309}]}}',
        '{"n":' + "9" * 400 + ".5}",
        '{"n":' + "9" * 400 + "e0}",
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_an_overflowing_number_is_a_parse_error(text: str, as_bytes: bool) -> None:
    with pytest.raises(MCPError) as raised:
        parse_json(text.encode() if as_bytes else text)
    assert raised.value.code == -32700
    assert raised.value.data == "a number is too large for a double (like 1e999), which is no finite number"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"n":1e308}', {"n": 1e308}),
        ('{"n":1e-999}', {"n": 0.0}),
        ('{"s":"1e999 and ' + "9" * 400 + '"}', {"s": "1e999 and " + "9" * 400}),
        ('{"n":' + "9" * 400 + "}", {"n": int("9" * 400)}),
        ('{"version":"2026-07-28","e":"e+000999"}', {"version": "2026-07-28", "e": "e+000999"}),
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_text_that_only_looks_large_parses(text: str, expected: object, as_bytes: bool) -> None:
    value = parse_json(text.encode() if as_bytes else text)
    assert value == expected
    if isinstance(value, dict) and isinstance(n := value.get("n"), float):
        assert math.isfinite(n)


def test_the_scan_of_a_body_for_large_numbers_finds_what_the_two_patterns_find() -> None:
    from mcpdi.lowlevel._jsonrpc import _BIG_EXPONENT, _MANY_DIGITS, _may_overflow  # pyright: ignore[reportPrivateUsage]

    rng = random.Random(20260728)
    pieces = ["0", "7", "e", "E", "+", "-", ".", "x", '"', "é", "9" * 150, "0" * 299, "1e", "e00"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = _BIG_EXPONENT.search(text) is not None or (
            len(text) >= 300 and _MANY_DIGITS.search(text) is not None
        )
        assert _may_overflow(text) == expected, text
        assert _may_overflow(text.encode()) == expected, text
        assert _may_overflow(bytearray(text.encode())) == expected, text
