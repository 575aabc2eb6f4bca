"""`MCPServer(extensions=[...])` as SDK code uses it: what an extension adds, advertises and wraps."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.server.extension import Extension as SdkExtension
from mcp.server.mcpserver import MCPServer as SdkMCPServer
from mcp_types import RequestParams
from port_harness import MODES, outcome, serve, transcripts, wire

import mcpdi
from mcpdi_transport import Client as McpdiClient

pytestmark = pytest.mark.anyio


async def extended(client: Client) -> dict[str, Any]:
    tools = {tool.name: wire(tool) for tool in (await client.list_tools()).tools}
    return {
        "tools": tools,
        "forecast": await outcome(client.call_tool("forecast", {"city": "Oslo"})),
        "intercepted": await outcome(client.call_tool("closed", {})),
        "passed through": await outcome(client.call_tool("hello", {"name": "Ada"})),
        "resources": [wire(resource) for resource in (await client.list_resources()).resources],
        "stations": await outcome(client.read_resource("weather://stations")),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_an_extensions_tools_resources_and_interceptor_serve_as_in_the_sdk(mode: str) -> None:
    seen = await transcripts("extensions", mode, extended)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["tools"]["forecast"]["_meta"] == {"com.example/weather": True}
    assert seen["mcpdi"]["tools"]["forecast"]["title"] == "Forecast"
    intercepted = seen["mcpdi"]["intercepted"]
    assert intercepted["isError"] is True
    assert intercepted["content"][0]["text"] == "down for maintenance"
    assert seen["mcpdi"]["passed through"]["content"][0]["text"] == "Hello Ada"


async def discovered(client: Client) -> Any:
    return wire((await client.session.discover()).capabilities).get("extensions")


async def test_extensions_are_advertised_in_the_2026_capabilities_as_in_the_sdk() -> None:
    seen = await transcripts("extensions", "auto", discovered)
    assert (
        seen["mcpdi"]
        == seen["sdk"]
        == {"com.example/weather": {"units": "metric"}, "com.example/maintenance": {}}
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_extension_method_is_served_and_its_params_validated(mode: str) -> None:
    from port_harness import load

    mcp = load("extensions", "mcpdi").mcp
    async with McpdiClient(mcp, mode=mode) as client:
        assert await client.send_request("com.example/echo", {"text": "hi"}) == {"echoed": "hi"} | (
            {
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "Weather", "version": ""}},
            }
            if mode != "legacy"
            else {}
        )
        with pytest.raises(mcpdi.MCPError) as caught:
            await client.send_request("com.example/echo", {"text": 5})
        assert caught.value.code == -32602


class EchoParams(RequestParams):
    text: str


async def echo(ctx: Any, params: EchoParams) -> dict[str, str]:
    return {"echoed": params.text}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_method_limited_to_some_versions_is_not_found_at_the_others(mode: str) -> None:
    class Modern(mcpdi.Extension):
        identifier = "com.example/modern"

        def methods(self) -> list[mcpdi.MethodBinding]:
            return [mcpdi.MethodBinding("com.example/echo", EchoParams, echo, frozenset({"2026-07-28"}))]

    async with McpdiClient(mcpdi.MCPServer("m", extensions=[Modern()]), mode=mode) as client:
        if mode == "legacy":
            with pytest.raises(mcpdi.MCPError) as caught:
                await client.send_request("com.example/echo", {"text": "hi"})
            assert (caught.value.code, caught.value.message) == (-32601, "Method not found")
        else:
            assert (await client.send_request("com.example/echo", {"text": "hi"}))["echoed"] == "hi"


class Unnamed(SdkExtension):
    pass


class Named(SdkExtension):
    identifier = "com.example/named"


class TakesList(SdkExtension):
    identifier = "com.example/lists"

    def methods(self) -> list[Any]:
        from mcp.server.extension import MethodBinding as SdkMethodBinding

        return [SdkMethodBinding("com.example/ping", RequestParams, echo)]


MISUSE: dict[str, Any] = {
    "an extension without an identifier": [Unnamed()],
    "the same extension twice": [Named(), Named()],
    "two extensions binding one method": [
        TakesList(),
        type("Again", (TakesList,), {"identifier": "com.example/again"})(),
    ],
}


@pytest.mark.parametrize("case", MISUSE)
def test_extension_misuse_is_refused_at_construction_with_the_sdks_words(case: str) -> None:
    with pytest.raises((TypeError, ValueError)) as sdk:
        SdkMCPServer("s", extensions=MISUSE[case])
    with pytest.raises(type(sdk.value)) as ours:
        mcpdi.MCPServer("s", extensions=MISUSE[case])
    assert str(ours.value) == str(sdk.value)


def test_an_identifier_without_a_vendor_prefix_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError) as caught:

        class Bad(mcpdi.Extension):  # pyright: ignore[reportUnusedClass]
            identifier = "weather"

    assert str(caught.value) == (
        "Bad.identifier must be a `vendor-prefix/name` string (reverse-DNS prefix required), got 'weather'"
    )


def test_a_method_binding_may_not_take_a_spec_method() -> None:
    with pytest.raises(ValueError, match="MethodBinding cannot bind spec method 'tools/list'"):
        mcpdi.MethodBinding("tools/list", RequestParams, echo)


class Guarded(mcpdi.Extension):
    identifier = "com.example/guarded"

    def methods(self) -> list[mcpdi.MethodBinding]:
        return [mcpdi.MethodBinding("com.example/secret", RequestParams, self.secret)]

    async def secret(self, ctx: Any, params: RequestParams) -> dict[str, str]:
        mcpdi.require_client_extension(ctx, self.identifier)
        return {"secret": "42"}


def modern_call(method: str, extensions: dict[str, Any] | None) -> tuple[dict[str, str], dict[str, Any]]:
    capabilities = {} if extensions is None else {"extensions": extensions}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    return headers, {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}}


async def test_require_client_extension_refuses_a_client_that_did_not_declare_it() -> None:
    mcp = mcpdi.MCPServer("g", extensions=[Guarded()])
    async with serve(mcp.streamable_http_app()) as url, httpx.AsyncClient() as http:
        headers, body = modern_call("com.example/secret", {"com.example/guarded": {}})
        declared = (await http.post(url, json=body, headers=headers)).json()
        headers, body = modern_call("com.example/secret", None)
        undeclared = (await http.post(url, json=body, headers=headers)).json()
    assert declared["result"]["secret"] == "42"
    assert undeclared["error"] == {
        "code": -32021,
        "message": "Client did not declare required extension 'com.example/guarded'",
        "data": {"requiredCapabilities": {"extensions": {"com.example/guarded": {}}}},
    }
