"""The standing wire fuzzer: after any body or line a peer sends, the server still serves.

Real servers (uvicorn on 127.0.0.1 in both eras, `mcpdi run` on stdio), a few hundred inputs
each; `benchmarks/fuzz_wire.py` runs the same for longer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_examples import examples
from wire_fuzz import HttpTarget, StdioTarget, http_target, stdio_target, wire_inputs

pytestmark = pytest.mark.slow

FUZZ = settings(
    max_examples=examples(200), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.fixture(scope="module")
def http() -> Iterator[HttpTarget]:
    with http_target() as target:
        yield target


@pytest.fixture(scope="module")
def stdio() -> Iterator[StdioTarget]:
    with stdio_target() as target:
        yield target


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_any_http_body_is_answered_without_5xx_and_the_server_keeps_serving(
    http: HttpTarget, era: str
) -> None:
    @FUZZ
    @given(raw=wire_inputs)
    def fuzz(raw: bytes) -> None:
        http.send(era, raw)

    fuzz()


def test_any_stdio_line_leaves_the_process_alive_and_serving(stdio: StdioTarget) -> None:
    @FUZZ
    @given(raw=wire_inputs)
    def fuzz(raw: bytes) -> None:
        stdio.send(raw)

    fuzz()
