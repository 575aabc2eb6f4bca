"""A bounded HTTP load generator for MCP `tools/call`, run in its own process (its own GIL).

Raw asyncio streams, HTTP/1.1 keep-alive, one connection per concurrent worker, request
bytes prepared once (only the JSON-RPC id changes), so the client costs little next to the
server. A run stops after a fixed number of requests or a time bound, whichever comes
first, after a warm-up on the same connections; it reports completed requests, elapsed
seconds and the latency percentiles.

Driven over stdin/stdout, one JSON object per line (`python -m benchmarks.loadgen`):

- `{"op": "check", "port": P, "flow": F, "tool": T}` -> `{"status": 200, "body": "..."}`
- `{"op": "run", "port": P, "flow": F, "tool": T, "concurrency": C, "requests": N,
   "seconds": S, "warmup": W}` -> `{"done": n, "elapsed": s, "p50_us": x, "p99_us": y, "errors": e, "warm": w}`

Flows: `modern` (2026-07-28: a stateless POST with the `_meta` envelope and the
`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` headers), `legacy` (per worker:
`initialize`, `notifications/initialized`, then `tools/call` with `Mcp-Session-Id`; the
session is deleted after the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "loadgen", "version": "0"},
}


class HttpError(Exception):
    pass


@dataclass
class Connection:
    """One keep-alive HTTP/1.1 connection."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    host: bytes

    @classmethod
    async def open(cls, port: int) -> Connection:
        deadline = time.monotonic() + 30
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                return cls(reader, writer, f"127.0.0.1:{port}".encode())
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)

    async def exchange(
        self, method: bytes, headers: bytes, body: bytes
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        self.writer.write(
            b"%s /mcp HTTP/1.1\r\nhost: %s\r\ncontent-length: %d\r\n%s\r\n%s"
            % (method, self.host, len(body), headers, body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        fields: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                fields[name.strip().lower()] = value.strip()
        if b"content-length" in fields:
            data = await self.reader.readexactly(int(fields[b"content-length"]))
        elif fields.get(b"transfer-encoding", b"").lower() == b"chunked":
            chunks: list[bytes] = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")  # no trailers are expected
                    break
                chunks.append((await self.reader.readexactly(size + 2))[:-2])
            data = b"".join(chunks)
        else:
            data = b""
        return status, fields, data

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


def _headers(pairs: dict[str, str]) -> bytes:
    return b"".join(f"{k}: {v}\r\n".encode() for k, v in pairs.items())


_COMMON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@dataclass
class Client:
    """One worker: a connection and the prepared request for one flow and tool."""

    connection: Connection
    flow: str
    tool: str
    headers: bytes = b""
    session: bytes | None = None
    next_id: int = 1
    body_tail: bytes = field(default=b"")

    @classmethod
    async def open(cls, port: int, flow: str, tool: str) -> Client:
        client = cls(await Connection.open(port), flow, tool)
        params: dict[str, Any] = {"name": tool, "arguments": {"title": "Dune"}}
        if flow == "modern":
            params["_meta"] = _ENVELOPE
            client.headers = _headers(
                {**_COMMON, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}
            )
        elif flow == "legacy":
            await client._initialize()
        else:
            msg = f"unknown flow {flow!r} (modern, legacy)"
            raise ValueError(msg)
        client.body_tail = (
            b',"method":"tools/call","params":' + json.dumps(params, separators=(",", ":")).encode() + b"}"
        )
        return client

    async def _initialize(self) -> None:
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "loadgen", "version": "0"},
            },
        }
        status, fields, body = await self.connection.exchange(
            b"POST", _headers(_COMMON), json.dumps(hello).encode()
        )
        if status != 200 or b"mcp-session-id" not in fields:
            msg = f"initialize failed: HTTP {status} {body[:300]!r}"
            raise HttpError(msg)
        self.session = fields[b"mcp-session-id"]
        self.headers = _headers(
            {**_COMMON, "mcp-protocol-version": LEGACY, "mcp-session-id": self.session.decode()}
        )
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        status, _, body = await self.connection.exchange(b"POST", self.headers, note)
        if status not in (200, 202):
            msg = f"notifications/initialized failed: HTTP {status} {body[:300]!r}"
            raise HttpError(msg)

    async def call(self) -> tuple[int, bytes]:
        body = b'{"jsonrpc":"2.0","id":%d%s' % (self.next_id, self.body_tail)
        self.next_id += 1
        status, _, data = await self.connection.exchange(b"POST", self.headers, body)
        return status, data

    async def close(self) -> None:
        if self.session is not None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                await self.connection.exchange(b"DELETE", self.headers, b"")
        await self.connection.close()


async def check(port: int, flow: str, tool: str) -> dict[str, Any]:
    client = await Client.open(port, flow, tool)
    try:
        status, body = await client.call()
    finally:
        await client.close()
    return {"status": status, "body": body.decode("utf-8", "replace")}


def _percentile(ordered: list[int], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


async def run(
    port: int, flow: str, tool: str, concurrency: int, requests: int, seconds: float, warmup: float
) -> dict[str, Any]:
    clients = await asyncio.gather(*(Client.open(port, flow, tool) for _ in range(concurrency)))
    latencies: list[int] = []
    errors = 0
    issued = 0
    warm = 0
    timing = False
    deadline = 0.0

    async def worker(client: Client) -> None:
        nonlocal errors, issued, warm
        clock = time.perf_counter_ns
        while True:
            if timing:
                if issued >= requests or time.perf_counter() >= deadline:
                    return
                issued += 1
            elif time.perf_counter() >= deadline:
                return
            start = clock()
            status, _ = await client.call()
            if timing:
                latencies.append(clock() - start)
                if status != 200:
                    errors += 1
            else:
                warm += 1

    try:
        deadline = time.perf_counter() + warmup
        await asyncio.gather(*(worker(c) for c in clients))
        timing = True
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(worker(c) for c in clients))
        elapsed = time.perf_counter() - started
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    latencies.sort()
    return {
        "done": len(latencies),
        "elapsed": elapsed,
        "p50_us": _percentile(latencies, 0.50),
        "p99_us": _percentile(latencies, 0.99),
        "errors": errors,
        "warm": warm,
    }


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        command = json.loads(line)
        try:
            if command["op"] == "check":
                answer = await check(command["port"], command["flow"], command["tool"])
            else:
                answer = await run(
                    command["port"],
                    command["flow"],
                    command["tool"],
                    command["concurrency"],
                    command["requests"],
                    command["seconds"],
                    command["warmup"],
                )
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(_serve())
