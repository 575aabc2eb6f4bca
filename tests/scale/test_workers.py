"""`mcpdi run --workers 2 --redis URL`: two processes on one socket share keys and the replay store."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scale_services import call_tool, free_port, redis_server, stop, wait_for_port

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parent / "workers_server.py"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with redis_server() as redis:
        command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER), "--transport", "http"]
        command += ["--port", str(port), "--workers", "2", "--redis", redis.url, "--log-level", "warning"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, process)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(process)


call = call_tool


def test_two_workers_answer_and_rounds_move_between_them_once_only(url: str) -> None:
    answered_by = {call(url, "pid", {})["result"]["content"][0]["text"] for _ in range(40)}
    assert len(answered_by) == 2, "both workers accept connections"
    finals: set[str] = set()
    for _ in range(12):
        first = call(url, "pay", {"arguments": {"amount": 3}})["result"]
        (key,) = first["inputRequests"]
        final_round = {
            "arguments": {"amount": 3},
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        finals.add(call(url, "pay", final_round)["result"]["content"][0]["text"])
        replay = call(url, "pay", final_round)
        assert replay["error"]["code"] == -32602, "a round is accepted once, whichever worker sees it"
    assert finals <= {f"paid 3 in {pid}" for pid in answered_by}


def test_several_workers_without_a_shared_store_are_refused_before_serving(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER), "--transport", "http"]
    done = subprocess.run(
        [*command, "--workers", "2"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "mcpdi: several workers need a shared requestState replay store, or a confirmed round could be "
        "replayed once on each of them: add --redis redis://127.0.0.1:6379/0"
    )
