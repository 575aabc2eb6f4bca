"""Driving the HTTP apps in process: one `tools/call` request per call through the ASGI app itself.

No socket, no uvicorn, no HTTP parser: the request's scope and body are handed to the app
and its response messages collected, so what is timed is the app's own work per request
(the part an implementation controls; uvicorn and h11 cost the same for everyone). After
the body, `receive()` waits like a server does until the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from benchmarks.graphs import Graph

Call = Callable[[Mapping[str, Any]], Awaitable[Any]]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}
_COMMON = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]


async def asgi_request(
    app: Any, headers: list[tuple[bytes, bytes]], body: bytes
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One POST /mcp through `app`: (status, response headers, response body)."""
    sent: list[Mapping[str, Any]] = []
    delivered = False

    async def receive() -> Mapping[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(body)).encode()), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), data


async def tool_calls(app: Any, flow: str, graphs: Sequence[Graph]) -> dict[str, Call]:
    """Per graph name, a call sending that graph's `tools/call` in `flow` (modern, legacy)."""
    if flow == "modern":
        base = [*_COMMON, (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call")]
    else:
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
        status, fields, data = await asgi_request(app, _COMMON, json.dumps(hello).encode())
        if status != 200 or b"mcp-session-id" not in fields:
            msg = f"initialize failed: HTTP {status} {data[:200]!r}"
            raise RuntimeError(msg)
        base = [
            *_COMMON,
            (b"mcp-protocol-version", LEGACY.encode()),
            (b"mcp-session-id", fields[b"mcp-session-id"]),
        ]
        await asgi_request(app, base, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    calls: dict[str, Call] = {}
    for graph in graphs:
        headers = [*base, (b"mcp-name", graph.name.encode())] if flow == "modern" else base
        calls[graph.name] = _tool_call(app, headers, graph.name, flow)
    return calls


def _tool_call(app: Any, headers: list[tuple[bytes, bytes]], name: str, flow: str) -> Call:
    """Sends `tools/call` of `name`, a new id each time.

    The body's encoding is the client's work, not the app's, and the 2026-07-28 body is the
    larger one: so the body after its id is encoded once per `arguments` object, and only
    the id is written per request, at the same small cost in every row.
    """
    counter = iter(range(1, 1 << 62))
    encoded: list[tuple[Mapping[str, Any], bytes]] = []

    async def call(arguments: Mapping[str, Any]) -> Any:
        if not encoded or encoded[0][0] is not arguments:
            params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
            if flow == "modern":
                params["_meta"] = _ENVELOPE
            rest = json.dumps({"method": "tools/call", "params": params})[1:]
            encoded[:] = [(arguments, rest.encode())]
        body = b'{"jsonrpc": "2.0", "id": %d, %b' % (next(counter), encoded[0][1])
        status, _, data = await asgi_request(app, headers, body)
        return status, data

    return call


async def enter_app(stack: contextlib.AsyncExitStack, app: Any) -> None:
    """Run the app's lifespan (its MCP server starts there) until `stack` closes."""
    await stack.enter_async_context(app.router.lifespan_context(app))
