"""stdio in a real subprocess (`python -m mcpdi_transport run ...`), driven with raw JSON lines."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from inline_snapshot import snapshot
from transport_asgi import MODERN_META

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SERVER_FILE = HERE / "transport_sample_server.py"


class StdioSession:
    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        await self._stdin.send(line.encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(30):
            return json.loads(await self._lines.receive_until(b"\n", 1 << 20))

    async def request(self, message: dict[str, Any] | str) -> dict[str, Any]:
        await self.send(message)
        return await self.receive()

    async def close_stdin_and_wait(self) -> bytes:
        """Close stdin; return what else came on stdout before the process exited."""
        await self._stdin.aclose()
        rest = b""
        with anyio.fail_after(30):
            while True:
                try:
                    rest += await self._lines.receive()
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    break
            await self.process.wait()
        return rest


@asynccontextmanager
async def stdio_server(server_file: Path = SERVER_FILE) -> AsyncIterator[StdioSession]:
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(server_file)]
    async with await anyio.open_process(command, cwd=ROOT) as process:
        try:
            yield StdioSession(process)
        finally:
            if process.returncode is None:
                process.kill()


def initialize(id_: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw-client", "version": "0.0.1"},
        },
    }


def call(id_: int | str, name: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, **params}}


async def test_legacy_era_answers_a_mid_call_question_and_survives_garbage_lines() -> None:
    async with stdio_server() as server:
        result = (await server.request(initialize()))["result"]
        assert result["serverInfo"]["name"] == "transport-sample"
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        assert await server.request("{not json") == snapshot(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32700,
                    "message": "Parse error",
                    "data": "key must be a string at line 1 column 2",
                },
            }
        )

        question = await server.request(call(3, "greet", arguments={}))
        assert question["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        final = await server.request(answer)
        assert final == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "Hi, Ada!"}], "isError": False},
        }

        shouted = await server.request(call(4, "shout"))
        assert shouted["result"]["content"][0]["text"] == "shouted"
        assert await server.close_stdin_and_wait() == b""
        assert server.process.returncode == 0


async def test_a_cancelled_request_is_never_answered() -> None:
    async with stdio_server() as server:
        await server.request(initialize())
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await server.send(call(5, "sleep"))
        await server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
        pong = await server.request({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert pong == {"jsonrpc": "2.0", "id": 6, "result": {}}
        assert await server.close_stdin_and_wait() == b""


async def test_modern_era_is_locked_by_the_first_request_and_refuses_initialize() -> None:
    async with stdio_server() as server:
        first = await server.request(call("a", "greet", _meta=MODERN_META))
        assert first["result"]["resultType"] == "input_required"
        retry = call(
            "b",
            "greet",
            _meta=MODERN_META,
            inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
            requestState=first["result"]["requestState"],
        )
        assert (await server.request(retry))["result"]["content"][0]["text"] == "Hi, Ada!"
        refused = await server.request(initialize(7))
        assert refused["error"]["code"] == -32022
        assert refused["error"]["message"] == snapshot(
            "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"
        )


async def test_an_in_flight_request_is_still_answered_after_stdin_closes() -> None:
    async with stdio_server() as server:
        await server.request(initialize())
        await server.send(call(8, "echo", arguments={"text": "late"}))
        rest = await server.close_stdin_and_wait()
    assert json.loads(rest)["result"]["content"][0]["text"] == "late"


async def test_prints_while_the_file_is_imported_stay_off_the_protocol_stream(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy.py"
    noisy.write_text(
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\nprint('hello from import')\n"
        "from transport_sample_server import server\n"
    )
    async with stdio_server(noisy) as server:
        pong = await server.request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert pong == {"jsonrpc": "2.0", "id": 1, "result": {}}
