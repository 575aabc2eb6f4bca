"""Slow and greedy peers against real uvicorn: header deadlines, a connection cap, quiet logs."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers, uvicorn_serving
from transport_cli_processes import StderrLines
from transport_sample_server import server

from mcpdi_transport._http._uvicorn import RateLimitedLogs

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

needs_httptools = pytest.mark.skipif(
    importlib.util.find_spec("httptools") is None, reason="httptools comes with uvicorn[standard]"
)

HERE = Path(__file__).parent
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
async def test_at_the_cap_a_client_still_sending_its_headers_makes_room_for_a_newcomer(http: str) -> None:
    async with running_server(limit_concurrency=2, header_timeout=30.0, http=http) as port:
        holders = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(2)]
        for holder in holders:
            await holder.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
        async with httpx2.AsyncClient(timeout=10) as client:
            served = await client.post(
                f"http://127.0.0.1:{port}/mcp", json=LIST, headers=modern_headers("tools/list")
            )
        with anyio.fail_after(5):
            shed = await closed_by_server(holders[0])
        for holder in holders:
            await holder.aclose()
    assert served.status_code == 200
    assert shed


async def open_session(client: httpx2.AsyncClient, url: str) -> dict[str, str]:
    opened = await client.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
    headers = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
    await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


@pytest.mark.parametrize("http", PARSERS)
async def test_connections_beyond_the_cap_being_answered_get_503_and_the_server_recovers(http: str) -> None:
    async with running_server(limit_concurrency=2, http=http) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=10) as setup:
            sessions = [await open_session(setup, url) for _ in range(2)]
        async with httpx2.AsyncClient(timeout=10) as client:
            async with contextlib.AsyncExitStack() as streams:
                for headers in sessions:  # two open streams hold both connections
                    await streams.enter_async_context(client.stream("GET", url, headers=headers))
                async with httpx2.AsyncClient(timeout=10) as newcomer:
                    refused = await newcomer.post(url, json=LIST, headers=modern_headers("tools/list"))
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


def limited_descriptors(soft: int) -> Callable[[], None]:
    def limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return limit


@pytest.mark.parametrize("http", PARSERS)
async def test_under_a_low_descriptor_limit_slow_bodies_are_shed_for_normal_clients(http: str) -> None:
    command = [
        *(sys.executable, "-m", "mcpdi_transport", "run", "transport_grace_server.py:mcp"),
        *("--transport", "http", "--port", "0", "--http", http, "--log-level", "info"),
    ]
    process = subprocess.Popen(
        command,
        cwd=HERE,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limited_descriptors(256),
    )
    lines = StderrLines(process)
    try:
        seen = lines.until("Serving Grace on")
        port = int(re.findall(r"127\.0\.0\.1:(\d+)", seen)[-1])
        slow: list[anyio.abc.SocketStream] = []
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n{"
        ).encode()
        try:
            for _ in range(300):  # more than the process has descriptors
                connection = await anyio.connect_tcp("127.0.0.1", port)
                await connection.send(head)  # and the rest of the body never comes
                slow.append(connection)
            statuses: list[int] = []
            async with httpx2.AsyncClient(timeout=10) as client:
                for _ in range(10):
                    response = await client.post(
                        f"http://127.0.0.1:{port}/mcp", json=LIST, headers=modern_headers("tools/list")
                    )
                    statuses.append(response.status_code)
        finally:
            for connection in slow:
                await connection.aclose()
    finally:
        process.terminate()
        process.wait(timeout=15)
        lines.join()
    assert statuses == [200] * 10, "".join(lines.lines.queue)
    assert "the open-file limit (ulimit -n) leaves room for 224 connections, not 1000" in seen
