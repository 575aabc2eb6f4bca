"""HTTP options spelled as the SDK spells them, `custom_route`, and `run`'s transport names."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from port_harness import FLAVOURS, MODES, load, serve

from mcpdi import MCPServer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_http_options_serve_alike(mode: str) -> None:
    seen: dict[str, Any] = {}
    for flavour in FLAVOURS:
        module = load("http_options", flavour)
        async with serve(module.build_app(), "/rpc") as url:
            async with Client(url, mode=mode) as client:
                result = await client.call_tool("changed", {})
                info = client.server_info if mode == "legacy" else None
            async with httpx.AsyncClient() as http:
                health = await http.get(url.replace("/rpc", "/health"))
        seen[flavour] = (
            result.content,
            info and (info.name, info.version, info.website_url),
            health.status_code,
            health.json(),
        )
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"][2:4] == (200, {"status": "ok"})


def test_run_refuses_http_options_on_stdio() -> None:
    with pytest.raises(
        TypeError, match=r"HTTP options \['json_response'\] make no sense with transport='stdio'"
    ):
        MCPServer().run("stdio", json_response=True)


def test_run_refuses_an_unknown_transport() -> None:
    with pytest.raises(ValueError, match=r"^unknown transport 'websocket'; use 'stdio', 'streamable-http'"):
        MCPServer().run("websocket")  # pyright: ignore[reportArgumentType]
