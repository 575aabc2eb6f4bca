"""Rotating the requestState key ring without downtime: new key first, old keys verify until they expire."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve
from mcpdi.testing import InMemoryClient
from mcpdi_transport._workers import ConfigurationError, configure_state, read_key_ring

pytestmark = pytest.mark.anyio

OLD, NEW = secrets.token_hex(32), secrets.token_hex(32)


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def server(keys: list[str]) -> MCPServer:
    mcp = MCPServer("Rotating", request_state=RequestStateSecurity(keys=keys))

    @mcp.tool()
    def act(sure: Annotated[Confirm, Resolve(confirm)]) -> str:
        return "done" if sure.ok else "not done"

    return mcp


async def first_round(mcp: MCPServer) -> dict[str, Any]:
    async with mcp.running() as runner:
        return (await InMemoryClient(runner).send("tools/call", {"name": "act", "arguments": {}}))["result"]


async def final_round(mcp: MCPServer, first: dict[str, Any]) -> dict[str, Any]:
    (key,) = first["inputRequests"]
    params = {
        "name": "act",
        "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    async with mcp.running() as runner:
        return await InMemoryClient(runner).send("tools/call", params)


async def test_a_round_sealed_before_the_rotation_completes_after_it() -> None:
    before, after = server([OLD]), server([NEW, OLD])
    finished = await final_round(after, await first_round(before))
    assert finished["result"]["content"] == [{"type": "text", "text": "done"}]


async def test_a_round_sealed_with_the_new_key_is_refused_by_a_process_not_yet_rotated() -> None:
    # Hence the order: first give every process the new key second ([OLD, NEW]), then first.
    refused = await final_round(server([OLD]), await first_round(server([NEW, OLD])))
    assert refused["error"]["code"] == -32602
    finished = await final_round(server([OLD, NEW]), await first_round(server([NEW, OLD])))
    assert finished["result"]["content"] == [{"type": "text", "text": "done"}]


def test_the_ring_is_read_from_a_file_first_then_from_the_environment(tmp_path: Path) -> None:
    ring = tmp_path / "keys"
    ring.write_text(f"# newest first\n{NEW}\n\n{OLD}\n")
    assert read_key_ring(ring, {"MCPDI_STATE_KEYS": "ignored"}) == [NEW, OLD]
    assert read_key_ring(None, {"MCPDI_STATE_KEYS": f"{NEW}, {OLD}"}) == [NEW, OLD]
    assert read_key_ring(None, {}) is None
    (tmp_path / "empty").write_text("# nothing yet\n")
    with pytest.raises(ConfigurationError, match="holds no key"):
        read_key_ring(tmp_path / "empty")
    with pytest.raises(ConfigurationError, match="cannot read the state key file"):
        read_key_ring(tmp_path / "missing")


def test_a_configured_ring_replaces_only_the_default_policy() -> None:
    default = MCPServer("Default")
    configure_state(default, [NEW, OLD], None)
    assert not default.request_state.is_ephemeral
    own = RequestStateSecurity(keys=[OLD])
    authored = MCPServer("Authored", request_state=own)
    configure_state(authored, [NEW], None)
    assert authored.request_state is own
    with pytest.raises(ConfigurationError, match="not usable"):
        configure_state(MCPServer("Short"), ["too-short"], None)


def test_the_ring_configured_works_across_two_servers_of_one_name() -> None:
    one, two = MCPServer("Shared"), MCPServer("Shared")
    for each in (one, two):
        configure_state(each, [NEW], None)

    for each in (one, two):

        @each.tool()
        def act(sure: Annotated[Confirm, Resolve(confirm)]) -> str:
            return "done" if sure.ok else "not done"

    async def across() -> dict[str, Any]:
        return await final_round(two, await first_round(one))

    assert anyio.run(across)["result"]["content"] == [{"type": "text", "text": "done"}]
