"""The shutdown grace, honoured by `mcpdi run --grace` and under the user's own uvicorn.

At SIGTERM or Ctrl-C, short calls finish; every other call (one sleeping, one blocking its
thread, one on a handshake-era SSE stream) is answered with -32603 at the grace, and the
process exits soon after, without waiting for a call that blocks its thread.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers
from transport_cli_processes import StderrLines

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
GRACE = 2.0
SHUTTING_DOWN = {"code": -32603, "message": "The server is shutting down"}


def call(id_: int, name: str, seconds: float, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"seconds": seconds}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def started(command: list[str], announced: str) -> tuple[subprocess.Popen[str], StderrLines, int]:
    process = subprocess.Popen(command, cwd=HERE, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = StderrLines(process)
    seen = lines.until(announced)
    port = re.findall(r"127\.0\.0\.1:(\d+)", seen)[-1]
    return process, lines, int(port)


async def shut_down_while_calls_run(
    process: subprocess.Popen[str], lines: StderrLines, port: int, number: int, *, blocking: bool
) -> tuple[dict[str, tuple[float, Any]], float]:
    """Start the calls, send `number` once each runs, return each outcome with its time and the exit time."""
    url = f"http://127.0.0.1:{port}/mcp"
    outcomes: dict[str, tuple[float, Any]] = {}
    signalled = 0.0

    async def modern(client: httpx2.AsyncClient, label: str, name: str, seconds: float) -> None:
        body = call(len(label), name, seconds, MODERN_META)
        async with client.stream(
            "POST", url, json=body, headers=modern_headers("tools/call", name)
        ) as response:
            text = (await response.aread()).decode()
            streamed = response.headers["content-type"].startswith("text/event-stream")
        data = [line[6:] for line in text.splitlines() if line.startswith("data: {")]
        message = json.loads(data[-1] if streamed else text)
        answer = message.get("error") or message["result"]["content"][0]["text"]
        outcomes[label] = (time.monotonic() - signalled, answer)

    async def legacy(client: httpx2.AsyncClient, seconds: float) -> None:
        opened = await client.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
        headers = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        await client.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        messages: list[dict[str, Any]] = []
        async with client.stream("POST", url, json=call(99, "pause", seconds), headers=headers) as response:
            async for sse in httpx2.EventSource(response):
                if sse.data:
                    messages.append(json.loads(sse.data))
        outcomes["legacy sleeping"] = (time.monotonic() - signalled, messages[-1].get("error"))

    async with httpx2.AsyncClient(timeout=30) as client, anyio.create_task_group() as group:
        group.start_soon(modern, client, "short", "pause", 0.3)
        group.start_soon(modern, client, "sleeping", "pause", 30.0)
        if blocking:
            group.start_soon(modern, client, "blocking", "block", 30.0)
        group.start_soon(legacy, client, 30.0)
        long_calls = 3 if blocking else 2
        for _ in range(long_calls + 1):  # each waits up to 30 s, in a thread a failed call abandons
            await anyio.to_thread.run_sync(lines.until, "started ", abandon_on_cancel=True)
        signalled = time.monotonic()
        process.send_signal(number)
    with anyio.fail_after(20):
        while process.poll() is None:
            await anyio.sleep(0.05)
    return outcomes, time.monotonic() - signalled


def assert_graceful(outcomes: dict[str, tuple[float, Any]], exited_after: float, stuck: set[str]) -> None:
    assert outcomes.pop("short")[1] == "slept 0.3"
    for label, (after, answer) in outcomes.items():
        assert answer == SHUTTING_DOWN, label
        assert GRACE - 0.1 <= after <= GRACE + 1.5, (label, after)
    assert exited_after <= GRACE + 3.5, exited_after
    assert set(outcomes) >= stuck


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_mcpdi_run_answers_at_the_grace_and_exits_without_waiting_for_a_blocked_thread(
    number: signal.Signals,
) -> None:
    command = [
        *(sys.executable, "-m", "mcpdi_transport", "run", "transport_grace_server.py:mcp"),
        *("--transport", "http", "--port", "0", "--grace", str(GRACE), "--log-level", "warning"),
    ]
    process, lines, port = started(command, "Serving Grace on")
    try:
        outcomes, exited_after = await shut_down_while_calls_run(process, lines, port, number, blocking=True)
    finally:
        if process.poll() is None:
            process.kill()
        lines.join()
    assert_graceful(outcomes, exited_after, {"blocking"})


async def test_the_user_s_own_uvicorn_gets_the_grace_from_the_app_s_lifespan() -> None:
    command = [sys.executable, "-m", "uvicorn", "transport_grace_server:app", "--port", "0"]
    process, lines, port = started(command, "Uvicorn running on")
    try:
        outcomes, exited_after = await shut_down_while_calls_run(
            process, lines, port, signal.SIGTERM, blocking=False
        )
    finally:
        if process.poll() is None:
            process.kill()
        lines.join()
    assert_graceful(outcomes, exited_after, set())


async def test_a_listening_client_is_told_the_stream_ended_when_shutdown_begins() -> None:
    from mcp import Client as SdkClient

    command = [
        *(sys.executable, "-m", "mcpdi_transport", "run", "transport_listen_server.py:mcp"),
        *("--transport", "http", "--port", "0", "--grace", "30", "--log-level", "warning"),
    ]
    process, lines, port = started(command, "Serving Listened on")
    try:
        with anyio.fail_after(20):  # far below the grace: the stream does not wait for it
            async with (
                SdkClient(f"http://127.0.0.1:{port}/mcp", mode="2026-07-28") as client,
                client.listen(tools_list_changed=True) as sub,
            ):
                await client.call_tool("change", {})
                process.send_signal(signal.SIGTERM)
                events = [event async for event in sub]  # ends: the graceful close, not a drop
        assert [type(event).__name__ for event in events] == ["ToolsListChanged"]
        with anyio.fail_after(20):
            while process.poll() is None:
                await anyio.sleep(0.05)
    finally:
        if process.poll() is None:
            process.kill()
        lines.join()
