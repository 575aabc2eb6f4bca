"""Header values are read without surrounding whitespace (RFC 9110 §5.5), whatever the ASGI server does."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.types import Message
from transport_asgi import MODERN_META, asgi_scope, http_client, modern_headers
from transport_sample_server import server

from mcpdi_transport import build_http_app

pytestmark = pytest.mark.anyio


async def test_a_padded_mcp_name_header_matches_the_body() -> None:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": MODERN_META}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = modern_headers("tools/call") | {"mcp-name": "  echo\t "}
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=body, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"] == [{"type": "text", "text": "hi"}]


async def _post_raw(app: Any, headers: list[Any], body: bytes) -> tuple[int, bytes]:
    """One POST through the ASGI app with `headers` exactly as given (tuples or lists)."""
    sent: list[Message] = []
    delivered = anyio.Event()

    async def receive() -> Message:
        if not delivered.is_set():
            delivered.set()
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: Message) -> None:
        sent.append(message)

    scope = asgi_scope("POST", headers)
    with anyio.fail_after(10):
        await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.mark.parametrize("pair", [tuple, list])
async def test_headers_read_the_same_on_every_request_whether_pairs_are_tuples_or_lists(pair: type) -> None:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": MODERN_META}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    names = ["  echo\t ", "echo", "other", "  echo\t ", "other", "echo"]
    app = build_http_app(server)
    statuses: list[int] = []
    async with app.router.lifespan_context(app):
        for name in names:
            headers = modern_headers("tools/call") | {"mcp-name": name}
            fields = [(b"host", b"127.0.0.1:8000")] + [(k.encode(), v.encode()) for k, v in headers.items()]
            status, _ = await _post_raw(app, [pair(field) for field in fields], body)
            statuses.append(status)
    assert statuses == [200, 200, 400, 200, 400, 200]


def test_decoded_headers_keep_no_credential_or_session_id_for_later_requests() -> None:
    from mcpdi_transport._http import _common

    secret = [
        (b"authorization", b"Bearer s3cret"),
        (b"proxy-authorization", b"Basic eA=="),
        (b"cookie", b"sid=1"),
        (b"mcp-session-id", b"a1b2c3"),
    ]
    scope = {"type": "http", "headers": [*secret, (b"x-kept", b" plain ")]}
    decoded = _common._decoded(scope)  # pyright: ignore[reportPrivateUsage]
    assert decoded.first["authorization"] == "Bearer s3cret"
    assert decoded.first["mcp-session-id"] == "a1b2c3"
    kept = _common._decoded_pairs  # pyright: ignore[reportPrivateUsage]
    assert kept[(b"x-kept", b" plain ")] == ("x-kept", "plain")
    assert not set(secret) & set(kept)
