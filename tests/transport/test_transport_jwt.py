"""`JwtVerifier`: JWT access tokens checked against a JWKS file or URL, with keys made here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from transport_asgi import http_client

from mcpdi import AuthSettings, MCPServer
from mcpdi_transport import JwtVerifier, build_http_app

pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example"
AUDIENCE = "http://127.0.0.1/mcp"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwks(kid: str = "k1") -> dict[str, Any]:
    public = json.loads(RSAAlgorithm.to_jwk(KEY.public_key()))
    return {"keys": [public | {"kid": kid, "use": "sig", "alg": "RS256"}]}


def token(key: Any = KEY, kid: str = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "ada", "client_id": "cli", "scope": "read write"}
    body |= {"iat": now, "exp": now + 300} | claims
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def verifier(tmp_path: Path) -> JwtVerifier:
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(jwks()))
    return JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_file=keys)


async def test_a_valid_token_becomes_an_access_token(verifier: JwtVerifier) -> None:
    issued = token()
    verified = await verifier.verify_token(issued)
    assert verified is not None
    assert (verified.client_id, verified.subject, verified.scopes) == ("cli", "ada", ["read", "write"])
    assert verified.resource == AUDIENCE
    assert verified.token == issued


@pytest.mark.parametrize(
    "bad",
    [
        token(exp=int(time.time()) - 3600),
        token(aud="http://elsewhere/mcp"),
        token(iss="https://evil.example"),
        token(key=OTHER_KEY),
        token(kid="unknown"),
        token()[:-4] + "AAAA",
        "not.a.jwt",
    ],
    ids=[
        "expired",
        "another audience",
        "another issuer",
        "another key",
        "unknown kid",
        "tampered",
        "garbage",
    ],
)
async def test_a_bad_token_is_unknown(verifier: JwtVerifier, bad: str) -> None:
    assert await verifier.verify_token(bad) is None


def test_a_verifier_needs_one_key_source_and_a_readable_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one of jwks_file= and jwks_url="):
        JwtVerifier(issuer=ISSUER, audience=AUDIENCE)
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the JWKS file"):
        JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_file=tmp_path / "broken.json")


@pytest.fixture
def jwks_url() -> Iterator[str]:
    document = json.dumps(jwks()).encode()

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, format: str, *args: Any) -> None:  # the base class names it so
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


async def test_keys_can_come_from_a_jwks_url(jwks_url: str) -> None:
    verifier = JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_url=jwks_url)
    verified = await verifier.verify_token(token())
    assert verified is not None
    assert verified.client_id == "cli"
    assert await verifier.verify_token(token(key=OTHER_KEY)) is None


async def test_the_http_app_serves_a_valid_jwt_and_challenges_the_rest(verifier: JwtVerifier) -> None:
    mcp = MCPServer("Guarded")

    @mcp.tool()
    def hello() -> str:
        return "hello"

    app = build_http_app(mcp, token_verifier=verifier, auth=AuthSettings(issuer_url=ISSUER))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    headers |= {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    body["params"] = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "jwt-test", "version": "0"},
        }
    }
    async with http_client(app) as client:
        served = await client.post(
            "/mcp", json=body, headers=headers | {"authorization": f"Bearer {token()}"}
        )
        forged = await client.post(
            "/mcp", json=body, headers=headers | {"authorization": f"Bearer {token(key=OTHER_KEY)}"}
        )
    assert served.status_code == 200, served.text
    assert [tool["name"] for tool in served.json()["result"]["tools"]] == ["hello"]
    assert forged.status_code == 401
    assert forged.headers["www-authenticate"].startswith("Bearer")
