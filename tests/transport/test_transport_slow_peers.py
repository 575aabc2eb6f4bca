"""Slow and greedy peers against real uvicorn: header deadlines, a connection cap, quiet logs."""

from __future__ import annotations

import importlib.util
import logging
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from transport_asgi import MODERN_META, modern_headers, uvicorn_serving
from transport_sample_server import server

from mcpdi_transport._http._uvicorn import RateLimitedLogs

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

needs_httptools = pytest.mark.skipif(
    importlib.util.find_spec("httptools") is None, reason="httptools comes with uvicorn[standard]"
)

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}


def running_server(**options: Any) -> AbstractAsyncContextManager[int]:
    return uvicorn_serving(server, **options)


async def closed_by_server(connection: anyio.abc.SocketStream) -> bool:
    try:
        while await connection.receive():
            pass
    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
        return True
    return True


PARSERS = ["h11", pytest.param("httptools", marks=needs_httptools)]


@pytest.mark.parametrize("http", PARSERS)
async def test_a_client_trickling_its_headers_is_disconnected_at_the_header_deadline(http: str) -> None:
    async with running_server(header_timeout=0.3, http=http) as port:
        connection = await anyio.connect_tcp("127.0.0.1", port)
        async with connection:
            await connection.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed = False
            for _ in range(20):  # 4 s at most; the deadline is 0.3 s
                try:
                    await connection.send(b"X")  # one byte at a time, each resetting keep-alive
                except (anyio.BrokenResourceError, ConnectionResetError, OSError):
                    closed = True
                if not closed:
                    with anyio.move_on_after(0.2):
                        closed = await closed_by_server(connection)
                if closed:
                    break
        assert closed
        async with httpx2.AsyncClient(timeout=10) as client:
            served = await client.post(
                f"http://127.0.0.1:{port}/mcp", json=LIST, headers=modern_headers("tools/list")
            )
    assert served.status_code == 200


@pytest.mark.parametrize("http", PARSERS)
async def test_connections_beyond_the_cap_get_503_and_the_server_recovers(http: str) -> None:
    async with running_server(limit_concurrency=2, header_timeout=30.0, http=http) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        holders = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(2)]
        for holder in holders:
            await holder.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
        async with httpx2.AsyncClient(timeout=10) as client:
            refused = await client.post(url, json=LIST, headers=modern_headers("tools/list"))
            for holder in holders:
                await holder.aclose()
            with anyio.fail_after(5):
                while True:
                    served = await client.post(url, json=LIST, headers=modern_headers("tools/list"))
                    if served.status_code != 503:
                        break
                    await anyio.sleep(0.05)
    assert refused.status_code == 503
    assert served.status_code == 200


def test_repeated_log_lines_are_let_through_in_a_burst_then_counted() -> None:
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    log = logging.getLogger("mcpdi_transport.test_rate_limit")
    log.propagate = False
    log.setLevel(logging.INFO)
    handler = Keep()
    log.addHandler(handler)
    limit = RateLimitedLogs(burst=3, window=0.0001)
    log.addFilter(limit)
    try:
        limit.window = 3600
        for number in range(10):
            log.warning("Invalid HTTP request received from %s", number)
        limit.window = 0  # a new window: the next line reports what was dropped
        log.warning("Invalid HTTP request received from %s", "x")
    finally:
        log.removeFilter(limit)
        log.removeHandler(handler)
    assert records == [
        "Invalid HTTP request received from 0",
        "Invalid HTTP request received from 1",
        "Invalid HTTP request received from 2",
        "Invalid HTTP request received from x (7 similar lines suppressed)",
    ]
