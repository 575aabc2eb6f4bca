"""Header values are read without surrounding whitespace (RFC 9110 §5.5), whatever the ASGI server does."""

from __future__ import annotations

import pytest
from transport_asgi import MODERN_META, http_client, modern_headers
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
