"""The wire fuzzer, run for longer: `python -m benchmarks.fuzz_wire --seconds 180`.

The same inputs and checks as `tests/transport/test_transport_wire_fuzz.py` (see
`tests/transport/wire_fuzz.py`), against uvicorn on 127.0.0.1 in both eras and `mcpdi run`
on stdio, in rounds until the time is up. Prints the inputs tried and the failures per
target; a failure is any HTTP 5xx, a non-JSON-RPC JSON answer, a `tools/list` that no longer
answers correctly, or a stdio process that exited. Exits 1 when anything failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "transport"))

from wire_fuzz import http_target, stdio_target, wire_inputs  # pyright: ignore[reportMissingImports]

_ROUND = settings(
    max_examples=200,
    deadline=None,
    database=None,
    phases=[Phase.generate],  # no shrinking: count the failure and go on
    suppress_health_check=list(HealthCheck),  # pyright: ignore[reportArgumentType]
)


def _fuzz_round(send: Callable[[bytes], None]) -> str | None:
    """200 inputs; the first failure as text, or None."""

    @_ROUND
    @given(raw=wire_inputs)
    def run(raw: bytes) -> None:
        send(raw)

    try:
        run()
    except Exception as failure:  # a failing input: report it, keep fuzzing
        return f"{type(failure).__name__}: {str(failure)[:300]}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0, help="total run time (default 180)")
    arguments = parser.parse_args()
    logging.disable(logging.ERROR)  # tools failing on odd arguments log; the checks judge
    share = arguments.seconds / 3
    rows: list[tuple[str, int, list[str]]] = []
    with http_target() as http:
        for era in ("legacy", "modern"):
            failures: list[str] = []
            before = http.tried
            deadline = time.monotonic() + share
            while time.monotonic() < deadline:
                failure = _fuzz_round(lambda raw, era=era: http.send(era, raw))
                if failure is not None:
                    failures.append(failure)
            rows.append((f"HTTP {era}", http.tried - before, failures))
    failures = []
    tried = 0
    deadline = time.monotonic() + share
    while time.monotonic() < deadline:
        with stdio_target() as stdio:  # a fresh process after a failure
            while time.monotonic() < deadline:
                failure = _fuzz_round(stdio.send)
                if failure is not None:
                    failures.append(failure)
                    break
            tried += stdio.tried
    rows.append(("stdio", tried, failures))
    print("| target | inputs tried | failures |")
    print("|---|---:|---:|")
    for name, count, found in rows:
        print(f"| {name} | {count} | {len(found)} |")
    for name, _, found in rows:
        for failure in found:
            print(f"- {name}: {failure}")
    if any(found for _, _, found in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
