"""Checks before any JSON-RPC: Host and Origin against DNS rebinding, Content-Type, body size."""

from __future__ import annotations

import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, http_client, initialize_body, modern_headers
from transport_sample_server import server

from mcpdi_transport._http._app import build_http_app

pytestmark = pytest.mark.anyio

DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}


@pytest.mark.parametrize(
    ("extra", "status", "text"),
    [
        ({"origin": "http://evil.example"}, 403, "Invalid Origin header"),
        ({"host": "evil.example:8000"}, 421, "Invalid Host header"),
        ({"origin": "http://localhost:3000"}, 200, None),
        ({"host": "localhost"}, 200, None),
        ({"content-type": "text/plain"}, 400, "Invalid Content-Type header"),
    ],
)
async def test_loopback_apps_check_host_origin_and_content_type(
    extra: dict[str, str], status: int, text: str | None
) -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post(
            "/mcp", json=DISCOVER, headers=modern_headers("server/discover", **extra)
        )
    assert response.status_code == status
    if text is not None:
        assert response.text == text


async def test_the_checks_apply_to_the_legacy_path_too() -> None:
    headers = {**LEGACY_HEADERS, "origin": "http://evil.example"}
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=initialize_body(), headers=headers)
    assert response.status_code == 403


async def test_apps_for_other_hosts_skip_rebinding_checks_unless_configured() -> None:
    headers = modern_headers("server/discover", host="mcp.example.com", origin="https://app.example.com")
    async with http_client(build_http_app(server, host="0.0.0.0")) as client:
        open_response = await client.post("/mcp", json=DISCOVER, headers=headers)
    strict = build_http_app(server, host="0.0.0.0", allowed_hosts=["mcp.example.com"], allowed_origins=[])
    async with http_client(strict) as client:
        strict_response = await client.post("/mcp", json=DISCOVER, headers=headers)
    assert open_response.status_code == 200
    assert strict_response.status_code == 403


async def test_bodies_over_the_limit_get_413() -> None:
    async with http_client(build_http_app(server, max_body_size=64)) as client:
        response = await client.post("/mcp", json={**DISCOVER, "pad": "x" * 100}, headers=modern_headers("x"))
    assert (response.status_code, response.text) == (413, "Request body too large")
