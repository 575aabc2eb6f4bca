"""Checks before any JSON-RPC: Host and Origin against DNS rebinding, Content-Type, body size."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, http_client, initialize_body, modern_headers
from transport_sample_server import server

from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._http._security import BodyLimit, is_loopback

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


async def test_a_wildcard_bind_still_refuses_foreign_origins_and_checks_hosts_once_named() -> None:
    headers = modern_headers("server/discover", host="mcp.example.com", origin="https://app.example.com")
    no_origin = modern_headers("server/discover", host="mcp.example.com")
    async with http_client(build_http_app(server, host="0.0.0.0")) as client:
        foreign = await client.post("/mcp", json=DISCOVER, headers=headers)
        plain = await client.post("/mcp", json=DISCOVER, headers=no_origin)
    named = build_http_app(
        server,
        host="0.0.0.0",
        allowed_hosts=["mcp.example.com"],
        allowed_origins=["https://app.example.com/"],
    )
    async with http_client(named) as client:
        allowed = await client.post("/mcp", json=DISCOVER, headers=headers)
        rebound = await client.post(
            "/mcp", json=DISCOVER, headers={**headers, "host": "attacker.example:8000"}
        )
    assert (foreign.status_code, foreign.text) == (403, "Invalid Origin header")
    assert plain.status_code == 200  # a non-browser client sends no Origin
    assert allowed.status_code == 200
    assert (rebound.status_code, rebound.text) == (421, "Invalid Host header")


@pytest.mark.parametrize(
    "bound", ["127.0.0.2", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "LOCALHOST"]
)
async def test_every_loopback_address_keeps_the_loopback_checks(bound: str) -> None:
    async with http_client(build_http_app(server, host=bound)) as client:
        evil = await client.post(
            "/mcp", json=DISCOVER, headers=modern_headers("server/discover", origin="http://evil.example")
        )
        rebound = await client.post(
            "/mcp", json=DISCOVER, headers=modern_headers("server/discover", host="attacker.example:8000")
        )
        local = await client.post(
            "/mcp", json=DISCOVER, headers=modern_headers("server/discover", host="LOCALHOST:8000")
        )
    assert (evil.status_code, rebound.status_code, local.status_code) == (403, 421, 200)


def test_is_loopback_knows_the_whole_loopback_range_and_nothing_else() -> None:
    loopback = [
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        "[::1]",
        "::ffff:127.0.0.1",
        "localhost",
        "a.localhost",
    ]
    other = ["0.0.0.0", "::", "10.0.0.1", "::ffff:10.0.0.1", "128.0.0.1", "example.com", "127.0.0.1.example"]
    assert [is_loopback(host) for host in loopback] == [True] * len(loopback)
    assert [is_loopback(host) for host in other] == [False] * len(other)


@pytest.mark.parametrize(
    ("host", "options", "expected"),
    [
        ("127.0.0.1", {}, []),
        ("127.0.0.1", {"dns_rebinding_protection": False}, ["Host and Origin checks are off"]),
        ("0.0.0.0", {}, ["the Host header is not checked", "browser pages are refused"]),
        ("0.0.0.0", {"allowed_hosts": ["mcp.example.com"]}, ["browser pages are refused"]),
        ("0.0.0.0", {"allowed_hosts": ["a.example"], "allowed_origins": ["https://a.example"]}, []),
    ],
)
def test_checks_that_are_off_or_open_are_logged_when_the_app_is_built(
    host: str, options: dict[str, Any], expected: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcpdi_transport"):
        build_http_app(server, host=host, **options)
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == len(expected)
    for warning, fragment in zip(warnings, expected, strict=True):
        assert fragment in warning


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 200),
        ("Application/JSON; charset=utf-8", 200),
        ("application/jsonfoo", 400),
        ("application/json-seq", 400),
        ("text/json", 400),
        ("", 400),
    ],
)
async def test_only_the_json_media_type_itself_is_accepted(content_type: str, status: int) -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post(
            "/mcp", json=DISCOVER, headers=modern_headers("server/discover", **{"content-type": content_type})
        )
    assert response.status_code == status


def trickling_body() -> Any:
    """An ASGI `receive` sending the first byte of a body, then nothing more."""
    received: list[dict[str, Any]] = []

    async def trickle() -> dict[str, Any]:
        if not received:
            received.append({})
            return {"type": "http.request", "body": b"{", "more_body": True}
        await anyio.sleep_forever()
        raise AssertionError

    return trickle


async def never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the app must not see a body that never finished")


async def test_a_body_that_trickles_in_too_slowly_gets_408() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}
    with anyio.fail_after(5):
        await BodyLimit(never_called, body_timeout=0.1)(scope, trickling_body(), send)
    assert sent[0]["status"] == 408
    assert sent[1]["body"] == b"Request body not received in time"


async def test_bodies_over_the_limit_get_413() -> None:
    async with http_client(build_http_app(server, max_body_size=64)) as client:
        response = await client.post("/mcp", json={**DISCOVER, "pad": "x" * 100}, headers=modern_headers("x"))
    assert (response.status_code, response.text) == (413, "Request body too large")


async def test_a_middleware_added_to_the_built_app_sees_requests_at_the_mcp_path_too() -> None:
    app = build_http_app(server)
    seen: list[str] = []

    class Recorder:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append(scope["path"])
            await self.inner(scope, receive, send)

    app.add_middleware(Recorder)
    async with http_client(app) as client:
        response = await client.post("/mcp", json=DISCOVER, headers=modern_headers("server/discover"))
    assert (response.status_code, seen) == (200, ["/mcp"])


async def test_the_mcp_path_keeps_the_body_limit_and_a_trickling_body_gets_408_through_the_app() -> None:
    app = build_http_app(server, body_timeout=0.1)
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "query_string": b""}
    async with app.router.lifespan_context(app):
        with anyio.fail_after(5):
            await app(scope, trickling_body(), send)
    assert (sent[0]["status"], sent[1]["body"]) == (408, b"Request body not received in time")


async def test_a_cancellation_from_outside_while_a_body_is_read_is_not_taken_for_the_deadline() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}
    with anyio.move_on_after(0.2) as outer:
        await BodyLimit(never_called, body_timeout=30)(scope, trickling_body(), send)
    assert (outer.cancelled_caught, sent) == (True, [])


async def test_every_request_is_checked_on_its_own_headers_whatever_came_before() -> None:
    sequence = [
        ({}, 200),
        ({"host": "evil.example:8000"}, 421),
        ({}, 200),
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "http://localhost:3000"}, 200),
        ({"origin": "http://evil.example"}, 403),
        ({"content-type": "text/plain"}, 400),
        ({"content-type": "application/json; charset=utf-8"}, 200),
        ({"host": "evil.example:8000"}, 421),
    ]
    async with http_client(build_http_app(server)) as client:
        statuses = [
            (
                await client.post("/mcp", json=DISCOVER, headers=modern_headers("server/discover", **extra))
            ).status_code
            for extra, _ in sequence
        ]
    assert statuses == [status for _, status in sequence]
