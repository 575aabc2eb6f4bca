"""One backend behind the gateway: `python gateway_backend.py PORT`.

Its name comes from `BACKEND` (also the prefix of its session ids), the state key ring from
`MCPDI_STATE_KEYS` (comma-separated, first seals), the shared replay store from `REDIS_URL`.
With `SHARED_SESSIONS=1` its handshake-era sessions live in that Redis too (no prefix then: any
backend serves any session), each Redis command waiting at most `REDIS_TIMEOUT` seconds, the
process's lease lasting `PROCESS_LEASE` seconds, each write of its SSE events reaching Redis
`EVENTS_LAG` seconds late (as on a busy machine), and a question to the client at most
`CLIENT_REQUEST_TIMEOUT` seconds; a session buffers at most `MAX_BUFFERED_BYTES` of events.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import anyio
from pydantic import BaseModel, Field

from mcpdi import Context, Elicit, MCPServer, RequestStateSecurity, Resolve
from mcpdi_transport import RedisReplayStore, RedisSessions, Trimmed, serve_http

BACKEND = os.environ["BACKEND"]


class Confirm(BaseModel):
    ok: bool


def confirm_payment(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR?", Confirm)


security = RequestStateSecurity(
    keys=os.environ["MCPDI_STATE_KEYS"].split(","),
    replay_store=RedisReplayStore(os.environ["REDIS_URL"]),
)
mcp = MCPServer("Regions", request_state=security)


@mcp.tool()
def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Say which backend served the region."""
    return f"{region} served by {BACKEND}"


def confirm_payment_here(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR on {BACKEND}?", Confirm)


@mcp.tool()
def pay_here(amount: int, confirm: Annotated[Confirm, Resolve(confirm_payment_here)]) -> str:
    """Pay after the person confirmed, asking in the name of the backend that runs the call."""
    return f"paid {amount} on {BACKEND}" if confirm.ok else "not paid"


@mcp.tool()
def whoami() -> str:
    """Name the backend that answered."""
    return BACKEND


@mcp.tool()
def pay(amount: int, confirm: Annotated[Confirm, Resolve(confirm_payment)]) -> str:
    """Pay after the person confirmed."""
    return f"paid {amount} on {BACKEND}" if confirm.ok else "not paid"


@mcp.tool()
async def steps(count: int, ctx: Context) -> str:
    """Log each step, a little apart, then say where it ran."""
    for step in range(count):
        await ctx.info(f"step {step} on {BACKEND}")
        await anyio.sleep(0.3)
    return f"{count} steps on {BACKEND}"


@mcp.tool()
async def hold(kilobytes: int, ctx: Context, pause: float = 0.0) -> str:
    """Log a kilobyte `kilobytes` times, `pause` seconds apart, then take 30 s (the stream stays open)."""
    for n in range(kilobytes):
        await ctx.info(f"{n:04d} on {BACKEND} " + "x" * 1000)
        await anyio.sleep(pause)
    await anyio.sleep(30)
    return f"held on {BACKEND}"


@mcp.tool()
async def wait(seconds: float) -> str:
    """Take a while."""
    await anyio.sleep(seconds)
    return f"waited on {BACKEND}"


class LateEvents:
    """The SSE event store of `RedisSessions`, each write reaching Redis `lag` seconds late."""

    def __init__(self, events: Any, lag: float) -> None:
        self._events = events
        self._lag = lag

    def __getattr__(self, name: str) -> Any:
        return getattr(self._events, name)  # the reads: `exists`, `read`, `orphaned`

    async def begin(self, key: str, *, writer: str, answering: str, ttl: float) -> None:
        await anyio.sleep(self._lag)
        await self._events.begin(key, writer=writer, answering=answering, ttl=ttl)

    async def append(
        self, key: str, events: Sequence[tuple[int, bytes]], *, ttl: float, writer: str, max_bytes: int
    ) -> list[Trimmed]:
        await anyio.sleep(self._lag)
        return await self._events.append(key, events, ttl=ttl, writer=writer, max_bytes=max_bytes)

    async def end(self, key: str, *, ttl: float) -> None:
        await anyio.sleep(self._lag)
        await self._events.end(key, ttl=ttl)

    async def trim(self, key: str, first_kept: int) -> None:
        await anyio.sleep(self._lag)
        await self._events.trim(key, first_kept)

    async def forget(self, key: str, *, writer: str) -> None:
        await anyio.sleep(self._lag)
        await self._events.forget(key, writer=writer)


class LateRedisSessions(RedisSessions):
    """`RedisSessions` whose SSE events reach Redis late."""

    def __init__(self, url: str, *, lag: float, **options: Any) -> None:
        super().__init__(url, **options)
        self.late_events = LateEvents(super().events, lag)

    @property
    def events(self) -> Any:
        return self.late_events


if __name__ == "__main__":
    if os.environ.get("SHARED_SESSIONS") == "1":
        timeout = float(os.environ.get("REDIS_TIMEOUT", "2"))
        lease = float(os.environ.get("PROCESS_LEASE", "5"))
        lag = float(os.environ.get("EVENTS_LAG", "0"))
        sessions = LateRedisSessions(os.environ["REDIS_URL"], lag=lag, timeout=timeout, process_lease=lease)
        options: dict[str, object] = {"sessions": sessions}
    else:
        options = {"session_id_prefix": f"{BACKEND}-"}
    if "MAX_BUFFERED_BYTES" in os.environ:
        options["max_buffered_bytes"] = int(os.environ["MAX_BUFFERED_BYTES"])
    if "CLIENT_REQUEST_TIMEOUT" in os.environ:
        options["client_request_timeout"] = float(os.environ["CLIENT_REQUEST_TIMEOUT"])
    serve = functools.partial(serve_http, mcp, "127.0.0.1", int(sys.argv[1]), **options)
    anyio.run(serve)
