"""Test doubles for HTTP: an in-process ASGI exchange whose response can be read while it streams."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.types import Message

LEGACY_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-client", "version": "0.0.1"},
}


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**LEGACY_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def initialize_body(version: str = "2025-11-25", id_: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "raw-client", "version": "0.0.1"},
        },
    }


async def open_legacy_session(client: httpx2.AsyncClient) -> dict[str, str]:
    """Open and initialize a 2025-11-25 session: the headers its later requests carry."""
    opened = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
    assert opened.status_code == 200
    headers = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=initialized, headers=headers)).status_code == 202
    return {**headers, "mcp-protocol-version": "2025-11-25"}


@asynccontextmanager
async def uvicorn_serving(server: Any, **options: Any) -> AsyncIterator[int]:
    """`serve_http(server, **options)` on 127.0.0.1 and a free port, in a task group; yields the port."""
    from mcpdi_transport._serve import serve_http

    async with anyio.create_task_group() as group:
        with anyio.fail_after(30):
            port = await group.start(
                partial(serve_http, server, "127.0.0.1", 0, log_level="warning", **options)
            )
        yield port
        group.cancel_scope.cancel()


@asynccontextmanager
async def uvicorn_app(app: Any) -> AsyncIterator[httpx2.AsyncClient]:
    """`app` under uvicorn on 127.0.0.1 and a free port; a client of it."""
    import uvicorn

    from mcpdi_transport._listen import bind_socket

    sock = bind_socket("127.0.0.1", 0)
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    runner = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(runner.serve, [sock])
        with anyio.fail_after(10):
            while not runner.started:
                await anyio.sleep(0.01)
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            yield client
        runner.should_exit = True
    sock.close()


@asynccontextmanager
async def http_client(app: Starlette) -> AsyncIterator[httpx2.AsyncClient]:
    """An httpx2 client calling `app` in process, with the app's lifespan entered."""
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            yield client


class StreamingExchange:
    """One request sent to the app directly; its response body is read event by event."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.started = anyio.Event()
        self.finished = anyio.Event()
        self.disconnect = anyio.Event()
        self._chunks_in, self._chunks_out = anyio.create_memory_object_stream[bytes](100)
        self._buffer = ""

    async def events(self) -> AsyncIterator[dict[str, str]]:
        """Parsed SSE events (field name to value); comments skipped."""
        while True:
            while "\r\n\r\n" in self._buffer:
                block, self._buffer = self._buffer.split("\r\n\r\n", 1)
                fields: dict[str, str] = {}
                for line in block.split("\r\n"):
                    if line.startswith(":"):
                        continue
                    name, _, value = line.partition(": ")
                    fields[name] = value
                if fields:
                    yield fields
            try:
                self._buffer += (await self._chunks_out.receive()).decode()
            except anyio.EndOfStream:
                return

    async def next_message(self) -> dict[str, Any]:
        """The next event that carries a JSON-RPC message."""
        async for event in self.events():
            if event.get("data"):
                return json.loads(event["data"])
        raise AssertionError("the stream ended without another message")


def asgi_scope(method: str, headers: list[Any]) -> dict[str, Any]:
    """The ASGI scope of one request to `/mcp` from 127.0.0.1, `headers` passed as they are."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": headers,
    }


@asynccontextmanager
async def streaming(
    app: Starlette, method: str, headers: Mapping[str, str | bytes], body: Any = None
) -> AsyncIterator[StreamingExchange]:
    """Send one request to `app` (lifespan already entered) and read the response as it comes."""
    exchange = StreamingExchange()
    raw = json.dumps(body).encode() if body is not None else b""
    scope = asgi_scope(
        method,
        [(b"host", b"127.0.0.1:8000")]
        + [(k.lower().encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()],
    )
    sent_body = False

    async def receive() -> Message:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await exchange.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            exchange.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
            exchange.started.set()
        elif message["type"] == "http.response.body":
            if message.get("body"):
                await exchange._chunks_in.send(message["body"])
            if not message.get("more_body", False):
                exchange._chunks_in.close()

    async def run() -> None:
        try:
            await app(scope, receive, send)
        finally:
            exchange._chunks_in.close()
            exchange.finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        yield exchange
        exchange.disconnect.set()
        with anyio.fail_after(5):
            await exchange.finished.wait()
        exchange._chunks_out.close()
