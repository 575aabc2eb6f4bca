"""A Redis that goes away: the rounds that need it get a clear error, everything else is served,
and the same rounds succeed once it is back."""

from __future__ import annotations

import secrets
from typing import Annotated

import anyio
import pytest
from pydantic import BaseModel
from scale_services import accept_ok as yes
from scale_services import result_text as text_of
from scale_services import start_redis, stop

from mcpdi import Elicit, MCPError, MCPServer, RequestStateSecurity, Resolve
from mcpdi_transport import Client, RedisReplayStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Go ahead?", Confirm)


def shop(url: str) -> MCPServer:
    security = RequestStateSecurity(
        keys=[secrets.token_hex(32)], replay_store=RedisReplayStore(url, timeout=1.0)
    )
    mcp = MCPServer("Shop", request_state=security)

    @mcp.tool()
    def ping() -> str:
        return "pong"

    @mcp.tool()
    def buy(sure: Annotated[Confirm, Resolve(confirm)]) -> str:
        return "bought" if sure.ok else "kept the money"

    return mcp


async def test_a_round_needing_an_unreachable_redis_fails_clearly_and_succeeds_when_it_is_back() -> None:
    redis = start_redis()
    mcp = shop(redis.url)
    try:
        with anyio.fail_after(30):
            async with Client(mcp, mode="2026-07-28", elicitation_callback=yes) as client:
                assert text_of(await client.call_tool("buy", {})) == "bought"
                stop(redis.process)
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("buy", {})
                assert caught.value.code == -32603
                assert caught.value.message == (
                    "The requestState replay store is unreachable; send the same request again shortly"
                )
                assert text_of(await client.call_tool("ping", {})) == "pong"  # nothing else stops
                redis = start_redis(redis.port)
                assert text_of(await client.call_tool("buy", {})) == "bought"
    finally:
        stop(redis.process)
