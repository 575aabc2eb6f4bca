"""Every keyword of the SDK's `MCPServer(...)`, `streamable_http_app()`, `run()` and `sse_app()`.

The lists come from the SDK's own signatures, so a keyword the SDK adds fails here until
mcpdi takes it or refuses it naming what to use instead.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.server.extension import Extension as SdkExtension
from mcp.server.lowlevel import Server as SdkServer
from mcp.server.mcpserver import MCPServer as SdkMCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.server.streamable_http import EventStore
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.server.transport_security import TransportSecuritySettings as SdkTransportSecurity
from port_harness import INITIALIZE_HEADERS, initialize, serve, text
from starlette.routing import Route

import mcpdi

pytestmark = pytest.mark.anyio

Accepted = None  # the keyword is taken


def keywords(fn: Callable[..., Any]) -> set[str]:
    return {name for name in inspect.signature(fn).parameters if name not in ("self", "transport", "kwargs")}


class Verifier:
    async def verify_token(self, token: str) -> mcpdi.AccessToken | None:
        return None


@asynccontextmanager
async def lifespan(server: Any) -> AsyncIterator[dict[str, int]]:
    yield {"ready": 1}


def double(x: int) -> int:
    return 2 * x


class SdkUi(SdkExtension):
    identifier = "com.example/ui"


class NoEvents(EventStore):
    async def store_event(self, stream_id: Any, message: Any) -> Any:
        return "1"

    async def replay_events_after(self, last_event_id: Any, send_callback: Any) -> Any:
        return None


AUTH = {"token_verifier": Verifier(), "auth": mcpdi.AuthSettings(issuer_url="https://auth.example.com")}

# keyword -> (the keywords an SDK user passes with it, None or the start of mcpdi's refusal)
SERVER_KEYWORDS: dict[str, tuple[dict[str, Any], str | None]] = {
    "name": ({"name": "n"}, Accepted),
    "title": ({"title": "T"}, Accepted),
    "description": ({"description": "d"}, Accepted),
    "instructions": ({"instructions": "i"}, Accepted),
    "website_url": ({"website_url": "https://example.com"}, Accepted),
    "icons": ({"icons": [mcpdi.Icon(src="https://example.com/i.png")]}, Accepted),
    "version": ({"version": "1.0"}, Accepted),
    "auth_server_provider": (
        {"auth_server_provider": object()},
        "MCPServer(auth_server_provider=...) is not taken by mcpdi, which serves as a resource server only: "
        "verify the tokens your authorization server issues with token_verifier=",
    ),
    "token_verifier": (AUTH, Accepted),
    "auth": (AUTH, Accepted),
    "tools": ({"tools": [SdkTool.from_function(double)]}, Accepted),
    "resources": ({"resources": [TextResource(uri="res://motd", name="motd", text="hi")]}, Accepted),
    "extensions": ({"extensions": [SdkUi()]}, Accepted),
    "debug": ({"debug": True}, Accepted),
    "log_level": ({"log_level": "WARNING"}, Accepted),
    "warn_on_duplicate_resources": ({"warn_on_duplicate_resources": False}, Accepted),
    "warn_on_duplicate_tools": ({"warn_on_duplicate_tools": False}, Accepted),
    "warn_on_duplicate_prompts": ({"warn_on_duplicate_prompts": False}, Accepted),
    "dependencies": ({"dependencies": ["httpx"]}, Accepted),
    "lifespan": ({"lifespan": lifespan}, Accepted),
    "resource_security": ({"resource_security": mcpdi.ResourceSecurity()}, Accepted),
    "request_state_security": (
        {"name": "n", "request_state_security": mcpdi.RequestStateSecurity(keys=[b"k" * 32])},
        Accepted,
    ),
    "cache_hints": (
        {"cache_hints": {"tools/list": object()}},
        "MCPServer(cache_hints=...) is not served by mcpdi",
    ),
    "subscriptions": ({"subscriptions": InMemorySubscriptionBus()}, Accepted),
    "middleware": ({"middleware": []}, Accepted),
}

APP_KEYWORDS: dict[str, tuple[dict[str, Any], str | None]] = {
    "streamable_http_path": ({"streamable_http_path": "/rpc"}, Accepted),
    "json_response": ({"json_response": True}, Accepted),
    "stateless_http": ({"stateless_http": True}, Accepted),
    "event_store": (
        {"event_store": NoEvents()},
        "streamable_http_app(event_store=...) is not taken by mcpdi: every stream's events are kept for "
        "resumption already (max_buffered_bytes= bounds them); for a store that several processes share, "
        "pass sessions=RedisSessions(url)",
    ),
    "retry_interval": ({"retry_interval": 2500}, Accepted),
    "max_request_body_size": ({"max_request_body_size": 1 << 20}, Accepted),
    "session_idle_timeout": ({"session_idle_timeout": None}, Accepted),
    "max_sessions": ({"max_sessions": None}, Accepted),
    "transport_security": (
        {"transport_security": SdkTransportSecurity(enable_dns_rebinding_protection=False)},
        Accepted,
    ),
    "host": ({"host": "0.0.0.0"}, Accepted),
}

LOW_LEVEL_APP_KEYWORDS: dict[str, tuple[dict[str, Any], str | None]] = {
    **APP_KEYWORDS,
    "auth": (AUTH, Accepted),
    "token_verifier": (AUTH, Accepted),
    "auth_server_provider": (
        {"auth_server_provider": object()},
        "auth_server_provider= is not taken by mcpdi, which serves as a resource server only",
    ),
    "custom_starlette_routes": ({"custom_starlette_routes": [Route("/up", lambda request: None)]}, Accepted),
    "debug": ({"debug": True}, Accepted),
}


def check(
    build: Callable[..., Any], table: dict[str, tuple[dict[str, Any], str | None]], keyword: str
) -> None:
    options, refusal = table[keyword]
    if refusal is None:
        build(**options)
    else:
        with pytest.raises(TypeError) as caught:
            build(**options)
        assert str(caught.value).startswith(refusal)


def test_the_tables_hold_every_keyword_the_sdk_takes() -> None:
    assert set(SERVER_KEYWORDS) == keywords(SdkMCPServer.__init__)
    assert set(APP_KEYWORDS) == keywords(SdkMCPServer.streamable_http_app)
    assert set(LOW_LEVEL_APP_KEYWORDS) == keywords(SdkServer.streamable_http_app)
    # run("streamable-http", ...) takes the app's keywords and where to listen; run("sse", ...) sse_app's
    overloads = [keywords(overload) for overload in typing.get_overloads(SdkMCPServer.run)]
    assert {"host", "port", *APP_KEYWORDS} in overloads
    assert {"port", *keywords(SdkMCPServer.sse_app)} in overloads


@pytest.mark.parametrize("keyword", sorted(SERVER_KEYWORDS))
def test_each_sdk_server_keyword_is_taken_or_refused_naming_the_alternative(keyword: str) -> None:
    check(mcpdi.MCPServer, SERVER_KEYWORDS, keyword)


@pytest.mark.parametrize("keyword", sorted(APP_KEYWORDS))
def test_each_sdk_app_keyword_is_taken_or_refused_naming_the_alternative(keyword: str) -> None:
    check(mcpdi.MCPServer().streamable_http_app, APP_KEYWORDS, keyword)


@pytest.mark.parametrize("keyword", sorted(LOW_LEVEL_APP_KEYWORDS))
def test_each_sdk_low_level_app_keyword_is_taken_or_refused(keyword: str) -> None:
    check(mcpdi.Server("low").streamable_http_app, LOW_LEVEL_APP_KEYWORDS, keyword)


def test_run_refuses_an_sdk_keyword_it_cannot_honour_before_listening() -> None:
    with pytest.raises(TypeError, match=r"^streamable_http_app\(event_store=\.\.\.\) is not taken by mcpdi"):
        mcpdi.MCPServer().run("streamable-http", event_store=NoEvents())  # pyright: ignore[reportCallIssue]


def test_sse_app_takes_every_keyword_of_the_sdks() -> None:
    # tests/port/test_port_sse.py serves the app; here each keyword is taken as the SDK spells it
    options = {
        "sse_path": "/events",
        "message_path": "/post/",
        "max_request_body_size": 1024,
        "transport_security": SdkTransportSecurity(enable_dns_rebinding_protection=False),
        "host": "0.0.0.0",
    }
    assert set(options) == keywords(SdkMCPServer.sse_app)
    mcpdi.MCPServer().sse_app(**options)


def test_an_sdk_name_and_mcpdis_for_one_option_are_refused_together() -> None:
    with pytest.raises(
        TypeError, match=r"^stateless_http= \(the official SDK's name\) and stateless= set the same option"
    ):
        mcpdi.Server("low").streamable_http_app(stateless_http=True, stateless=False)
    with pytest.raises(
        TypeError, match=r"^transport_security= \(the official SDK's name\) and allowed_hosts= set"
    ):
        mcpdi.Server("low").streamable_http_app(
            transport_security=SdkTransportSecurity(), allowed_hosts=["a"]
        )


async def test_tools_and_resources_given_to_the_constructor_are_served_as_in_the_sdk() -> None:
    seen: list[Any] = []
    for cls in (SdkMCPServer, mcpdi.MCPServer):
        server: Any = cls(
            tools=[SdkTool.from_function(double)],
            resources=[TextResource(uri="res://motd", name="motd", text="hi")],
        )
        result = await server.call_tool("double", {"x": 4})
        contents = await server.read_resource("res://motd")
        seen.append((text(result), [c.content for c in contents]))
    assert seen[1] == seen[0] == ("8", ["hi"])


async def test_retry_interval_is_the_reconnect_delay_a_stream_suggests() -> None:
    headers = INITIALIZE_HEADERS
    async with (
        serve(mcpdi.MCPServer().streamable_http_app(retry_interval=2500)) as url,
        httpx.AsyncClient() as http,
    ):
        response = await http.post(url, json=initialize(), headers=headers)
    assert "retry: 2500" in response.text


async def test_session_idle_timeout_none_keeps_sessions_and_the_client_works() -> None:
    app = mcpdi.MCPServer(tools=[SdkTool.from_function(double)]).streamable_http_app(
        session_idle_timeout=None, max_sessions=None
    )
    async with serve(app) as url, Client(url, mode="legacy") as client:
        assert text(await client.call_tool("double", {"x": 1})) == "2"
