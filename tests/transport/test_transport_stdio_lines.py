"""stdio framing in memory: over-long and unterminated lines, and the lifespan entered once."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from transport_asgi import LEGACY_HEADERS, http_client, initialize_body
from transport_sample_server import server

from mcpdi.lowlevel import Server
from mcpdi_transport import _stdio
from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._stdio import serve_stdio

pytestmark = pytest.mark.anyio


class Lines(anyio.abc.ByteReceiveStream):
    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        pass


class Collected(anyio.abc.ByteSendStream):
    def __init__(self) -> None:
        self.data = b""

    async def send(self, item: bytes) -> None:
        self.data += item

    async def aclose(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.decode().splitlines()]


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


async def test_an_over_long_line_gets_a_parse_error_and_the_next_line_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_stdio, "MAX_LINE", 64)
    out = Collected()
    with anyio.fail_after(5):
        await serve_stdio(server, Lines(b"x" * 50, b"y" * 50, b"z\n", PING + b"\n"), out)
    assert out.messages() == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error",
                "data": "the line is longer than 4194304 bytes",
            },
        },
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]


async def test_a_last_line_without_newline_is_still_served() -> None:
    out = Collected()
    with anyio.fail_after(5):
        await serve_stdio(server, Lines(b"\n", PING), out)
    assert out.messages() == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


async def test_a_batch_line_is_an_invalid_request() -> None:
    out = Collected()
    with anyio.fail_after(5):
        await serve_stdio(server, Lines(b"[" + PING + b"]\n"), out)
    assert out.messages()[0]["error"]["code"] == -32600


async def test_the_http_app_enters_the_lifespan_once_for_all_requests() -> None:
    entered: list[int] = []

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncGenerator[dict[str, Any]]:
        entered.append(1)
        yield {}

    counted = Server("counted", lifespan=lifespan)
    async with http_client(build_http_app(counted)) as client:
        for _ in range(3):
            await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
    assert entered == [1]
