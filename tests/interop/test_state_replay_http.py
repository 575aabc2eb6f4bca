"""Single-use requestState over real HTTP: uvicorn on 127.0.0.1, ten parallel replays of one state."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import httpx2
import pytest
from interop_servers import serve_app
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "replayer", "version": "0"},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "charge",
}


class Confirm(BaseModel):
    ok: bool


def ask_confirm(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Charge {amount}?", Confirm)


def call(id_: int, **params: Any) -> dict[str, Any]:
    body = {"name": "charge", "arguments": {"amount": 5}, "_meta": META, **params}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": body}


@pytest.mark.parametrize("single_use", [True, False], ids=["default", "single-use-off"])
async def test_ten_parallel_http_replays_of_one_state_run_the_tool_once(single_use: bool) -> None:
    charged: list[int] = []
    mcp = MCPServer("Shop", request_state=RequestStateSecurity.ephemeral(single_use=single_use))

    @mcp.tool()
    def charge(amount: int, confirm: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        charged.append(amount)
        return f"charged {amount}"

    replies: list[tuple[int, dict[str, Any]]] = []
    async with serve_app(mcp.streamable_http_app()) as url, httpx2.AsyncClient() as client:
        first = (await client.post(url, json=call(1), headers=HEADERS)).json()["result"]
        (key,) = first["inputRequests"]
        final = call(
            2,
            inputResponses={key: {"action": "accept", "content": {"ok": True}}},
            requestState=first["requestState"],
        )

        async def replay() -> None:
            response = await client.post(url, json=final, headers=HEADERS)
            replies.append((response.status_code, response.json()))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(replay)

    succeeded = [status for status, reply in replies if "result" in reply]
    refused = [reply["error"] for status, reply in replies if "error" in reply and status == 400]
    if single_use:
        assert succeeded == [200]
        assert [error["code"] for error in refused] == [-32602] * 9
        assert {error["message"] for error in refused} == {"Invalid or expired requestState"}
        assert charged == [5]
    else:  # the documented risk of turning it off
        assert succeeded == [200] * 10
        assert charged == [5] * 10
