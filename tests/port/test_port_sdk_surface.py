"""The SDK's smaller server names, used as SDK code uses them, give the SDK's results when ported."""

from __future__ import annotations

import logging
from typing import Any

import httpx2 as httpx
import mcp_types
import pytest
from mcp import Client
from mcp.server.lowlevel import Server as SdkServer
from mcp.server.mcpserver import MCPServer as SdkMCPServer
from mcp.server.mcpserver.prompts import Prompt as SdkPrompt
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import FLAVOURS, INITIALIZE_HEADERS, MODES, connect, initialize, load, serve, text, wire
from pydantic import AnyHttpUrl

import mcpdi

pytestmark = pytest.mark.anyio


def test_an_mcp_error_has_the_sdks_shape() -> None:
    assert load("sdk_surface", "mcpdi").error_shape() == load("sdk_surface", "sdk").error_shape()
    assert load("sdk_surface", "mcpdi").error_shape() == (
        -32602,
        "bad input",
        {"field": "a"},
        "bad input",
        -32602,
        {"field": "a"},
    )


def test_settings_read_as_in_the_sdk() -> None:
    assert load("sdk_surface", "mcpdi").settings() == load("sdk_surface", "sdk").settings()
    assert mcpdi.MCPServer().settings.log_level == SdkMCPServer().settings.log_level == "INFO"


async def errors(client: Client) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, call in (
        ("missing user", client.read_resource("surface://users/bob")),
        ("sealed vault", client.read_resource("surface://vault")),
        ("refused tool", client.call_tool("refuse", {})),
    ):
        try:
            seen[name] = wire(await call)
        except SdkMCPError as error:
            seen[name] = (error.error.code, error.error.message, error.error.data)
    return seen


@pytest.mark.parametrize("mode", MODES)
async def test_resource_and_mcp_errors_reach_the_client_as_the_sdk_sends_them(mode: str) -> None:
    seen = {}
    for flavour in FLAVOURS:
        async with connect(flavour, load("sdk_surface", flavour).mcp, mode) as client:
            seen[flavour] = await errors(client)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["missing user"] == (-32602, "no user bob", {"uri": "surface://users/bob"})
    assert seen["mcpdi"]["sealed vault"] == (-32603, "the vault is sealed", {"uri": "surface://vault"})
    assert seen["mcpdi"]["refused tool"] == (-32099, "not today", {"why": "closed"})


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", MODES)
async def test_the_request_session_logs_to_the_client_and_close_sse_stream_keeps_the_call(mode: str) -> None:
    seen = {}
    for flavour in FLAVOURS:
        logs: list[Any] = []

        async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
            logs.append((params.level, params.logger, params.data))  # noqa: B023

        async with connect(
            flavour, load("sdk_surface", flavour).mcp, mode, logging_callback=on_log
        ) as client:
            result = await client.call_tool("shout", {"text": "hi"})
        seen[flavour] = (text(result), logs)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"][0] == "HI"


def test_a_spec_invalid_tool_name_is_registered_with_the_sdks_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warned: dict[str, list[str]] = {}
    for flavour in FLAVOURS:
        server = load("sdk_surface", flavour).MCPServer()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            server.add_tool(lambda: "x", name="bad name!")
        warned[flavour] = [record.getMessage() for record in caplog.records]
    assert warned["mcpdi"] == warned["sdk"]
    assert warned["mcpdi"][:3] == [
        'Tool name validation warning for "bad name!":',
        "  - Tool name contains spaces, which may cause parsing issues",
        "  - Tool name contains invalid characters: ' ', '!'",
    ]


async def test_a_valid_tool_name_registers_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        mcpdi.MCPServer().add_tool(lambda: "x", name="get_user.v2-beta")
    assert caplog.records == []


async def test_add_prompt_takes_the_sdks_prompt_object() -> None:
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    seen = []
    for server in (SdkMCPServer(), mcpdi.MCPServer()):
        server.add_prompt(SdkPrompt.from_function(greet, name="hello", title="Hello"))
        prompts = await server.list_prompts()
        result = await server.get_prompt("hello", {"name": "Ada"})
        seen.append((wire(prompts), wire(result)))
    assert seen[1] == seen[0]


async def test_add_prompt_takes_a_function_too() -> None:
    server = mcpdi.MCPServer()
    server.add_prompt(lambda name: f"Hi {name}", name="hi")
    result = await server.get_prompt("hi", {"name": "Ada"})
    assert wire(result)["messages"][0]["content"]["text"] == "Hi Ada"
    with pytest.raises(
        TypeError, match=r"^add_prompt takes a Prompt object \(with \.fn\) or a function; got 3$"
    ):
        server.add_prompt(3)


@pytest.mark.parametrize("mode", MODES)
async def test_a_mounted_app_runs_under_the_outer_apps_session_manager(mode: str) -> None:
    seen = {}
    for flavour in FLAVOURS:
        async with (
            serve(load("sdk_surface", flavour).mounted_app(), "/surface/mcp") as url,
            Client(url, mode=mode) as client,
        ):
            seen[flavour] = text(await client.call_tool("upper", {"text": "mounted"}))
    assert seen["mcpdi"] == seen["sdk"] == "MOUNTED"


def test_the_session_manager_before_an_app_is_built_raises_the_sdks_error() -> None:
    for server in (SdkMCPServer(), mcpdi.MCPServer()):
        with pytest.raises(
            RuntimeError, match=r"^Session manager can only be accessed after calling streamable_http_app\(\)"
        ):
            server.session_manager  # noqa: B018


async def test_transport_security_settings_guard_hosts_and_origins_alike() -> None:
    seen = {}
    headers = INITIALIZE_HEADERS
    for flavour in FLAVOURS:
        app = load("sdk_surface", flavour).secured_app(max_request_body_size=2000)
        async with serve(app) as url, httpx.AsyncClient() as http:
            foreign_host = await http.post(
                url, json=initialize(), headers={**headers, "host": "evil.example"}
            )
            foreign_origin = await http.post(
                url, json=initialize(), headers={**headers, "origin": "http://evil.example"}
            )
            good_origin = await http.post(
                url, json=initialize(), headers={**headers, "origin": "http://good.example"}
            )
            too_big = await http.post(url, content=b"x" * 3000, headers=headers)
        seen[flavour] = [
            (r.status_code, r.text if r.status_code >= 400 else "")
            for r in (foreign_host, foreign_origin, good_origin, too_big)
        ]
    assert seen["mcpdi"] == seen["sdk"]
    assert [status for status, _ in seen["mcpdi"]] == [421, 403, 200, 413]


async def test_the_low_level_server_takes_the_sdks_app_keywords_and_initialization_options() -> None:
    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name="t", input_schema={"type": "object"})])

    seen = {}
    for server in (SdkServer("low", on_list_tools=list_tools), mcpdi.Server("low", on_list_tools=list_tools)):
        options = server.create_initialization_options()
        async with (
            serve(server.streamable_http_app(stateless_http=True, json_response=True)) as url,
            Client(url, mode="legacy") as client,
        ):
            tools = await client.list_tools()
        seen[type(server).__module__.split(".")[0]] = (
            options.server_name,
            options.capabilities.tools is not None,
            [tool.name for tool in tools.tools],
        )
    assert seen["mcpdi"] == seen["mcp"] == ("low", True, ["t"])


async def test_auth_settings_take_pydantic_urls_as_the_sdks_do() -> None:
    class Verifier:
        async def verify_token(self, token: str) -> mcpdi.AccessToken | None:
            return None

    mcp = mcpdi.MCPServer(
        "Protected",
        token_verifier=Verifier(),
        auth=mcpdi.AuthSettings(
            issuer_url=AnyHttpUrl("https://auth.example.com"),  # type: ignore[arg-type]
            resource_server_url=AnyHttpUrl("http://127.0.0.1/mcp"),  # type: ignore[arg-type]
        ),
    )
    async with serve(mcp.streamable_http_app()) as url, httpx.AsyncClient() as http:
        document = (await http.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))).json()
    assert document["authorization_servers"] == ["https://auth.example.com/"]
    assert document["resource"] == "http://127.0.0.1/mcp"


async def test_run_streamable_http_async_serves_in_the_callers_loop() -> None:
    import socket

    import anyio

    module = load("sdk_surface", "mcpdi")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result: Any = None
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: module.mcp.run_streamable_http_async(port=port, stateless_http=True))
        with anyio.fail_after(10):
            while True:
                try:
                    async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
                        result = await client.call_tool("upper", {"text": "loop"})
                    break
                except Exception:
                    await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    assert text(result) == "LOOP"
