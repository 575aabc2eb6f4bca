"""The plain JSON-RPC example runs as a script and answers its question in a second round."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "plain_rpc.py"


def test_the_example_prints_a_transcript_with_a_question_answered_in_a_second_round() -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True, timeout=60
    )
    responses = [json.loads(line[3:]) for line in out.stdout.splitlines() if line.startswith("<- ")]
    assert [r.get("result", {}).get("status") for r in responses] == [
        "complete",
        "input_required",
        "complete",
        None,
    ]
    assert responses[0]["result"]["value"] == {"title": "Dune", "in_stock": 3}
    (question,) = responses[1]["result"]["questions"].values()
    assert question["question"] == {"kind": "confirm", "message": "Emma is out of stock. Order it anyway?"}
    assert responses[2]["result"]["value"] == {"title": "Emma", "ordered": 1, "backorder": True}
    assert responses[3]["error"] == {"code": -32000, "message": "stock_of failed: unknown title 'Ulysses'"}
    lifecycle = [line for line in out.stdout.splitlines() if line.startswith("-- ")]
    assert lifecycle == ["-- catalogue opened", "-- catalogue closed"], "opened once, closed at shutdown"
    assert out.stdout.splitlines()[-1] == "-- catalogue closed"


@pytest.mark.anyio
async def test_the_dispatcher_maps_unknown_methods_and_missing_arguments_to_json_rpc_errors() -> None:
    handle: Any = runpy.run_path(str(EXAMPLE))["handle"]
    unknown = await handle({"jsonrpc": "2.0", "id": 1, "method": "nope"})
    assert unknown["error"]["code"] == -32601
    missing = await handle({"jsonrpc": "2.0", "id": 2, "method": "books.order", "params": {"arguments": {}}})
    assert missing["error"] == {"code": -32602, "message": "Call of 'order' lacks the argument 'title'"}
