"""Hostile stdio input in a real subprocess: one bad line never ends the process, and EOF ends it."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot
from test_transport_stdio import ROOT, SERVER_FILE, StdioSession, call, initialize

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def start(*options: str) -> tuple[anyio.abc.Process, StdioSession]:
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER_FILE), *options]
    process = await anyio.open_process(command, cwd=ROOT)
    session = StdioSession(process)
    assert "result" in await session.request(initialize())
    await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process, session


async def tool_names(session: StdioSession, id_: int) -> set[str]:
    listed = await session.request({"jsonrpc": "2.0", "id": id_, "method": "tools/list"})
    return {tool["name"] for tool in listed["result"]["tools"]}


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":"\\udfff","method":"x"}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800"}}}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":NaN}}}',
    ],
    ids=["surrogate-id", "surrogate-argument", "nan"],
)
async def test_a_line_that_is_not_strict_json_gets_a_parse_error_and_the_process_lives_on(line: str) -> None:
    process, session = await start()
    async with process:
        refused = await session.request(line)
        assert "echo" in await tool_names(session, 6)
        await session.close_stdin_and_wait()
    assert refused["id"] is None
    assert refused["error"]["code"] == -32700
    assert process.returncode == 0


@pytest.mark.parametrize("tool", ["huge", "surrogate"])
async def test_an_answer_that_cannot_be_encoded_is_an_internal_error_and_the_process_lives_on(
    tool: str,
) -> None:
    process, session = await start()
    async with process:
        answered = await session.request(call(7, tool, arguments={}))
        assert "echo" in await tool_names(session, 8)
        await session.close_stdin_and_wait()
    assert answered == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32603, "message": "Internal error: the response could not be encoded as JSON"},
        }
    )
    assert process.returncode == 0


async def test_closing_stdin_ends_the_process_within_the_grace_even_with_a_sync_tool_in_a_thread() -> None:
    process, session = await start("--grace", "0.5")
    async with process:
        await session.send(call(9, "block", arguments={"seconds": 60}))
        assert "block" in await tool_names(session, 10)  # the blocked thread holds no other request
        with anyio.fail_after(15):  # far below the tool's 60 s
            rest = await session.close_stdin_and_wait()
    answers: list[dict[str, Any]] = [json.loads(line) for line in rest.splitlines() if line]
    assert answers == snapshot(
        [
            {
                "jsonrpc": "2.0",
                "id": 9,
                "error": {
                    "code": -32603,
                    "message": "The server is shutting down: stdin closed and the grace period ended",
                },
            }
        ]
    )
    assert process.returncode == 0


async def test_an_unanswered_question_to_the_client_times_out_as_an_error_on_its_call() -> None:
    process, session = await start("--client-request-timeout", "0.2")
    async with process:
        question = await session.request(call(11, "greet", arguments={}))
        cancelled, failed = await session.receive(), await session.receive()  # no answer was sent
        assert "echo" in await tool_names(session, 12)
        await session.close_stdin_and_wait()
    assert question["method"] == "elicitation/create"
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == question["id"]
    assert failed["id"] == 11
    assert failed["error"]["code"] == -32001


def garbage_lines(count: int) -> list[bytes]:
    """Binary lines that are never JSON nor blank: NULs, CR before the newline, bytes that are not UTF-8."""
    chaos = random.Random(13)
    lines = []
    for index in range(count):
        noise = bytes(chaos.randrange(256) for _ in range(chaos.choice((1, 40, 700))))
        line = b"\x00" + noise.replace(b"\n", b"\x00")
        lines.append(line + b"\r" if index % 3 == 0 else line)
    return lines


async def test_a_flood_of_binary_lines_gets_one_error_each_and_the_call_after_it_is_answered() -> None:
    process, session = await start()
    async with process:
        lines = garbage_lines(200)
        lines.insert(100, b"A" * (6 * 1024 * 1024))  # over the line limit: skipped whole
        assert session.process.stdin is not None
        await session.process.stdin.send(b"\n".join(lines) + b"\n")
        await session.send(call(21, "echo", arguments={"text": "still here"}))
        rest = await session.close_stdin_and_wait()
    answers: list[dict[str, Any]] = [json.loads(line) for line in rest.splitlines() if line]
    refusals = [answer for answer in answers if answer.get("id") is None]
    assert [answer["error"]["code"] for answer in refusals] == [-32700] * 201
    assert [answer for answer in answers if answer.get("id") == 21] == [
        {
            "jsonrpc": "2.0",
            "id": 21,
            "result": {"content": [{"type": "text", "text": "still here"}], "isError": False},
        }
    ]
    assert process.returncode == 0
