"""A keyword where a server is served overrides the server's own option; the rest still hold."""

from __future__ import annotations

import httpx2
import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from transport_asgi import LEGACY_HEADERS, http_client, initialize_body

from mcpdi import AccessToken, AuthSettings, MCPServer, Server
from mcpdi.lowlevel import CustomRoute, ServingOptions
from mcpdi_transport import build_http_app

pytestmark = pytest.mark.anyio


class OneToken:
    def __init__(self, accepted: str) -> None:
        self.accepted = accepted

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="c", scopes=[]) if token == self.accepted else None


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def crash(request: Request) -> PlainTextResponse:
    msg = "crashed on purpose"
    raise RuntimeError(msg)


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


def guarded() -> MCPServer:
    mcp = MCPServer(
        "Guarded",
        token_verifier=OneToken("own"),
        auth=AuthSettings(issuer_url="https://own.test"),
        debug=True,
    )
    mcp.custom_route("/crash", methods=["GET"])(crash)
    return mcp


async def test_the_keyword_debug_overrides_the_servers_own() -> None:
    transport = httpx2.ASGITransport(build_http_app(guarded(), debug=False), raise_app_exceptions=False)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        crashed = await client.get("/crash")
    assert (crashed.status_code, crashed.text) == (500, "Internal Server Error")


async def test_bearer_auth_given_where_the_server_is_served_replaces_the_servers_own_pair() -> None:
    app = build_http_app(
        guarded(), token_verifier=OneToken("other"), auth=AuthSettings(issuer_url="https://other.test")
    )
    async with http_client(app) as client:
        document = (await client.get("/.well-known/oauth-protected-resource")).json()
        own = await client.post(
            "/mcp", json=initialize_body(), headers={**LEGACY_HEADERS, "authorization": "Bearer own"}
        )
        other = await client.post(
            "/mcp", json=initialize_body(), headers={**LEGACY_HEADERS, "authorization": "Bearer other"}
        )
    assert document["authorization_servers"] == ["https://other.test"]
    assert (own.status_code, other.status_code) == (401, 200)


def test_half_a_bearer_pair_where_the_server_is_served_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^bearer auth needs both token_verifier= and auth=AuthSettings\(\.\.\.\)$"
    ):
        build_http_app(guarded(), token_verifier=OneToken("other"))


async def test_routes_given_where_the_server_is_served_come_after_the_servers_own() -> None:
    mcp = MCPServer("Routes")
    mcp.custom_route("/hello", methods=["GET"])(hello)
    extra = Route("/hello", endpoint=crash, methods=["GET"]), Route("/extra", endpoint=hello, methods=["GET"])
    async with http_client(build_http_app(mcp, routes=extra)) as client:
        assert (await client.get("/hello")).text == "hello", "the server's route is matched first"
        assert (await client.get("/extra")).text == "hello"


async def test_a_low_level_server_serves_the_options_it_carries() -> None:
    server = Server("Low")
    server.serving_options = ServingOptions(
        OneToken("low"),
        AuthSettings(issuer_url="https://low.test"),
        (CustomRoute("/hello", hello, ("GET",)),),
    )
    async with http_client(server.streamable_http_app()) as client:
        refused = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
        assert refused.status_code == 401
        assert (await client.get("/hello")).text == "hello"


def test_serving_options_refuse_half_a_bearer_pair() -> None:
    with pytest.raises(ValueError, match=r"^bearer auth needs both token_verifier= and auth="):
        ServingOptions(token_verifier=OneToken("x"))
