"""The client driving a server object in memory through its runner, in both eras."""

from __future__ import annotations

import json
from typing import Annotated, Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve, Server, ServerRequestContext
from mcpdi_transport import Client
from mcpdi_transport._client import _memory
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28", "auto"]


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


mcp = MCPServer("memory-shop", instructions="in memory")


@mcp.tool()
def greet(greeting: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet someone whose name is asked."""
    return f"{greeting}, {who.name}!"


async def answer(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": f"Ada ({context.era})"})


@pytest.mark.parametrize("mode", MODES)
async def test_an_mcpserver_in_memory_asks_through_the_callbacks_in_either_era(mode: str) -> None:
    async with Client(mcp, mode=mode, elicitation_callback=answer) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.instructions) == ("memory-shop", "in memory")
        result = await client.call_tool("greet", {"greeting": "Hi"})
    era = "legacy" if mode == "legacy" else "modern"
    assert result.content == [types.TextContent(type="text", text=f"Hi, Ada ({era})!")]


async def test_a_low_level_server_in_memory_sees_the_clients_envelope() -> None:
    seen: list[Any] = []

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        seen.append((ctx.era, ctx.protocol_version, ctx.client_info))
        return types.ListToolsResult(tools=[])

    server = Server("low", on_list_tools=list_tools)
    info = types.Implementation(name="probe", version="2")
    async with Client(server, client_info=info) as client:
        assert (await client.list_tools()).tools == []
    assert seen == [("modern", "2026-07-28", info)]


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, None, True, "x"], "b": {"c": {}}},
        {"tuple": (1, (2, 3)), "nested": [{"t": ()}]},
        {1: "int key", None: "null key", False: "bool key", 2.5: "float key"},
        {"a": 1, 1: "duplicate after conversion", "1": "last wins"},
        {"inf": float("inf"), "negative zero": -0.0},
    ],
)
def test_messages_are_copied_exactly_as_a_json_round_trip_would(value: dict[Any, Any]) -> None:
    copied = _memory._copy(value)
    assert copied == json.loads(json.dumps(value))
    assert list(copied or {}) == list(json.loads(json.dumps(value)))


def test_a_message_that_is_not_json_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        _memory._copy({"a": {"b": object()}})


def test_a_copied_message_shares_no_container_with_the_original() -> None:
    original = {"params": {"arguments": {"titles": ["Dune"]}}}
    copied = _memory._copy(original)
    assert copied is not None
    copied["params"]["arguments"]["titles"].append("Emma")
    assert original == {"params": {"arguments": {"titles": ["Dune"]}}}
