"""`mcpdi run --workers 2 --redis URL`: two processes on one socket share keys and the replay store.

With `--shared-sessions` they share the 2025-11-25 sessions too: the kernel hands each connection
to either process, so a session's requests land on both.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from handshake_http import call as call_in_session
from handshake_http import initialize
from scale_services import accept_ok, call_tool, free_port, redis_server, result_text, stop, wait_for_port

from mcpdi_transport import Client

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parent / "workers_server.py"


@contextmanager
def two_workers(*options: str) -> Iterator[str]:
    port = free_port()
    with redis_server() as redis:
        command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER), "--transport", "http"]
        command += ["--port", str(port), "--workers", "2", "--redis", redis.url, "--log-level", "warning"]
        process = subprocess.Popen([*command, *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, process)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(process)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with two_workers() as served:
        yield served


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


def test_with_shared_sessions_one_session_is_served_by_both_workers() -> None:
    with two_workers("--shared-sessions") as url:
        session_id = initialize(url)
        answered_by = {
            call_in_session(url, session_id, "pid", {}, n)["result"]["content"][0]["text"] for n in range(40)
        }
        assert len(answered_by) == 2, "each request opens a connection: both workers serve the session"


@pytest.mark.anyio
async def test_with_shared_sessions_a_question_is_answered_whichever_worker_gets_the_answer() -> None:
    with two_workers("--shared-sessions") as url, anyio.fail_after(60):
        async with Client(url, mode="legacy", elicitation_callback=accept_ok) as client:
            for _ in range(6):
                assert result_text(await client.call_tool("pay", {"amount": 4})).startswith("paid 4 in ")


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (
            ["--transport", "http"],
            "--shared-sessions keeps the sessions in Redis: add --redis redis://127.0.0.1:6379/0",
        ),
        (
            ["--redis", "redis://127.0.0.1:1/0", "--transport", "stdio"],
            "--shared-sessions needs --transport http: a stdio server has one client, on one pipe",
        ),
    ],
)
def test_shared_sessions_without_redis_or_http_are_refused_before_serving(
    tmp_path: Path, options: list[str], problem: str
) -> None:
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER), "--shared-sessions"]
    done = subprocess.run([*command, *options], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == f"mcpdi: {problem}"
