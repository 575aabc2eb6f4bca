"""Bearer auth in front of everything: Host checked first, nothing of the request reflected, no body read."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from transport_asgi import LEGACY_HEADERS, http_client, initialize_body, uvicorn_serving
from transport_sample_server import server

from mcpdi import AccessToken, AuthSettings
from mcpdi_transport import build_http_app

pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example"
METADATA = "/.well-known/oauth-protected-resource/mcp"


class Tokens:
    """`good` is a valid token with the scope `read`; anything else is unknown."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="app", scopes=["read"]) if token == "good" else None


def app_with_auth(**options: Any) -> Any:
    settings = options.pop("settings", AuthSettings(issuer_url=ISSUER))
    return build_http_app(server, token_verifier=Tokens(), auth=settings, **options)


def uvicorn_with_auth(**options: Any) -> AbstractAsyncContextManager[int]:
    return uvicorn_serving(server, token_verifier=Tokens(), auth=AuthSettings(issuer_url=ISSUER), **options)


@pytest.mark.slow
@pytest.mark.parametrize("authorization", ["", "Authorization: Bearer forged\r\n"], ids=["none", "unknown"])
async def test_a_request_without_a_valid_token_is_refused_before_its_body_arrives(authorization: str) -> None:
    async with uvicorn_with_auth(body_timeout=30.0) as port:
        connection = await anyio.connect_tcp("127.0.0.1", port)
        async with connection:
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"{authorization}Content-Length: 4000000\r\n\r\n"
            )
            await connection.send(head.encode() + b"{" + b" " * 1000)  # the rest never comes
            received = b""
            with anyio.fail_after(5):  # the body deadline is 30 s
                try:
                    while chunk := await connection.receive():
                        received += chunk
                except anyio.EndOfStream:
                    pass  # and the server closes the connection, whose body it did not read
    status, _, rest = received.partition(b"\r\n")
    assert status == b"HTTP/1.1 401 Unauthorized"
    assert b"connection: close" in rest.lower()


@pytest.mark.parametrize("where", ["/mcp", METADATA])
async def test_a_foreign_host_gets_421_before_the_challenge_and_the_metadata(where: str) -> None:
    async with http_client(app_with_auth()) as client:
        response = await client.request(
            "POST" if where == "/mcp" else "GET",
            where,
            json=initialize_body(),
            headers={**LEGACY_HEADERS, "host": "evil.example"},
        )
    assert (response.status_code, response.text) == (421, "Invalid Host header")
    assert "www-authenticate" not in response.headers


@pytest.mark.parametrize(
    "host",
    ['x", error="forged', "a b", "evil.example/path", "x\\"],
    ids=["quote", "space", "slash", "backslash"],
)
@pytest.mark.parametrize("where", ["/mcp", METADATA])
async def test_an_unchecked_host_that_is_no_host_name_is_refused_never_reflected(
    host: str, where: str
) -> None:
    async with http_client(app_with_auth(dns_rebinding_protection=False)) as client:
        response = await client.request(
            "POST" if where == "/mcp" else "GET", where, json={}, headers={**LEGACY_HEADERS, "host": host}
        )
    assert (response.status_code, response.text) == (400, "Invalid Host header")
    assert "www-authenticate" not in response.headers


async def test_with_resource_server_url_the_request_s_host_appears_nowhere() -> None:
    settings = AuthSettings(issuer_url=ISSUER, resource_server_url="https://books.example/api/mcp")
    app = app_with_auth(settings=settings, dns_rebinding_protection=False)
    async with http_client(app) as client:
        foreign = {**LEGACY_HEADERS, "host": "evil.example"}
        refused = await client.post("/mcp", json=initialize_body(), headers=foreign)
        metadata = await client.get("/.well-known/oauth-protected-resource/api/mcp", headers=foreign)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == (
        'Bearer resource_metadata="https://books.example/.well-known/oauth-protected-resource/api/mcp", '
        'error_description="Bearer token required"'
    )
    assert metadata.json()["resource"] == "https://books.example/api/mcp"
    assert "evil" not in metadata.text


async def test_without_resource_server_url_the_challenge_names_a_metadata_url_that_is_served() -> None:
    async with http_client(app_with_auth()) as client:
        refused = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
        challenge = refused.headers["www-authenticate"]
        metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
        metadata = await client.get(metadata_url)
    assert metadata_url == "http://127.0.0.1:8000" + METADATA
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == "http://127.0.0.1:8000/mcp"


async def test_quotes_in_configured_scopes_are_escaped_in_the_challenge() -> None:
    settings = AuthSettings(issuer_url=ISSUER, required_scopes=['books"admin'])
    async with http_client(app_with_auth(settings=settings)) as client:
        refused = await client.post(
            "/mcp", json=initialize_body(), headers={**LEGACY_HEADERS, "authorization": "Bearer good"}
        )
    assert refused.status_code == 403
    assert refused.headers["www-authenticate"].endswith(r'scope="books\"admin"')
