"""The state layer: what one 2026-07-28 round costs when its `requestState` carries 64 KiB.

A tool asks two independent questions (sampling, then a name); the client answers the
sampling question with a 64 KiB completion (or a 2-byte one, for the fixed cost of a round)
and leaves the name pending, so every further
round opens, parses and re-seals the recorded answer. Timed in-memory (`tools/call` through
the runner, no transport; async resolvers and tools, so no thread hand-offs), in CPU time of
the loop thread, for the HMAC and the AES-GCM
codec and for text that compresses well and text that does not, next to a plain `echo`
call as the floor. The token is replayed for timing, so these servers turn single use off;
a separate row times the replay store's claim alone.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import random
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import thread_time_ns
from typing import Annotated, Any

from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

from mcpdi import AesGcmCodec, Elicit, MCPServer, MemoryReplayStore, RequestStateSecurity, Resolve, Sample
from mcpdi.testing import InMemoryClient

STATE_BYTES = 64 * 1024
KEY = b"benchmark key, 32 bytes or more!"


class Name(BaseModel):
    name: str


async def _ask_llm() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="Write"))], max_tokens=9
    )


async def _ask_name() -> Elicit[Name]:
    return Elicit("Name?", Name)


def _server(security: RequestStateSecurity) -> MCPServer:
    mcp = MCPServer("Bench", request_state=security)

    @mcp.tool()
    async def sample_then_name(
        reply: Annotated[CreateMessageResult, Resolve(_ask_llm)], who: Annotated[Name, Resolve(_ask_name)]
    ) -> str:
        return who.name

    @mcp.tool()
    async def echo(text: str) -> str:
        return text

    return mcp


def _text(kind: str) -> str:
    if kind == "small":
        return "hi"
    if kind == "compressible":
        return ("All work and no play makes a round cost. " * 2000)[:STATE_BYTES]
    noise = random.Random(7).randbytes(STATE_BYTES)
    return base64.b64encode(noise).decode()[:STATE_BYTES]


@dataclass(frozen=True, slots=True)
class Row:
    case: str
    token_chars: int
    min_us: float
    median_us: float


async def _time(call: Callable[[], Awaitable[Any]], repeats: int, n: int) -> tuple[float, float]:
    await call()  # warm
    samples: list[float] = []
    for _ in range(repeats):
        start = thread_time_ns()
        for _ in range(n):
            await call()
        samples.append((thread_time_ns() - start) / n / 1000)
    return min(samples), statistics.median(samples)


async def _round_rows(repeats: int, n: int) -> list[Row]:
    rows: list[Row] = []
    codecs = [
        ("hmac", RequestStateSecurity([KEY], single_use=False)),
        ("aes-gcm", RequestStateSecurity(codec=AesGcmCodec([KEY]), single_use=False)),
    ]
    for codec_name, security in codecs:
        async with _server(security).running() as runner:
            client = InMemoryClient(runner)
            if codec_name == "hmac":
                echo = {"name": "echo", "arguments": {"text": "hi"}}
                low, mid = await _time(functools.partial(client.send, "tools/call", echo), repeats, n)
                rows.append(Row("echo (no state), floor", 0, low, mid))
            for kind in ("small", "compressible", "incompressible"):
                first = await client.send("tools/call", {"name": "sample_then_name", "arguments": {}})
                requests = first["result"]["inputRequests"]
                key = next(k for k, v in requests.items() if v["method"] == "sampling/createMessage")
                answer = {
                    "role": "assistant",
                    "content": {"type": "text", "text": _text(kind)},
                    "model": "m",
                }
                second = await client.send(
                    "tools/call",
                    {
                        "name": "sample_then_name",
                        "arguments": {},
                        "inputResponses": {key: answer},
                        "requestState": first["result"]["requestState"],
                    },
                )
                token = second["result"]["requestState"]
                again = {"name": "sample_then_name", "arguments": {}, "requestState": token}
                low, mid = await _time(functools.partial(client.send, "tools/call", again), repeats, n)
                what = "a 2-byte answer" if kind == "small" else f"64 KiB {kind}"
                rows.append(Row(f"round with {what}, {codec_name}", len(token), low, mid))
    return rows


async def _claim_row(repeats: int, n: int) -> Row:
    store = MemoryReplayStore(max_entries=10_000_000)
    ids = iter(range(10**9))

    async def claim() -> bool:
        return await store.claim(f"id-{next(ids)}", 4e9)

    low, mid = await _time(claim, repeats, n)
    return Row("replay store claim (memory)", 0, low, mid)


def run(quick: bool) -> list[Row]:
    repeats, n = (5, 20) if quick else (15, 50)

    async def main() -> list[Row]:
        return [*await _round_rows(repeats, n), await _claim_row(repeats, n * 100)]

    return asyncio.run(main())


def format_table(rows: list[Row]) -> str:
    floor = next(row.median_us for row in rows if row.case.startswith("echo"))
    lines = [
        "| case | token chars | min µs | median µs | × echo |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        chars = f"{row.token_chars:,}" if row.token_chars else "-"
        lines.append(
            f"| {row.case} | {chars} | {row.min_us:,.1f} | {row.median_us:,.1f} | {row.median_us / floor:.1f} |"
        )
    return "\n".join(lines)


def run_state(quick: bool) -> None:
    print("## state: one 2026-07-28 round carrying a 64 KiB recorded answer (in memory, CPU time)\n")
    print(format_table(run(quick)))
    print()
