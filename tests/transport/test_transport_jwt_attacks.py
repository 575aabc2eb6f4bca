"""JWT bearer auth attacked over uvicorn on 127.0.0.1: keys of the other type, colliding
principals, and another caller's rounds. Every refusal is the same 401 or -32602 on the wire;
the log says why."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from pydantic import BaseModel
from transport_asgi import MODERN_META, modern_headers

from mcpdi import AccessToken, AuthSettings, Elicit, MCPServer, Resolve, principal_of
from mcpdi_transport import JwtVerifier
from mcpdi_transport._serve import serve_http

pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example"
AUDIENCE = "http://127.0.0.1/mcp"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def key_set() -> dict[str, Any]:
    rsa_public = json.loads(RSAAlgorithm.to_jwk(RSA_KEY.public_key()))
    ec_public = json.loads(ECAlgorithm.to_jwk(EC_KEY.public_key()))
    return {"keys": [rsa_public | {"kid": "rsa-1", "use": "sig"}, ec_public | {"kid": "ec-1", "use": "sig"}]}


def token(key: Any = RSA_KEY, algorithm: str = "RS256", kid: str = "rsa-1", **claims: Any) -> str:
    now = int(time.time())
    body: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 300}
    body |= {"client_id": "app", "sub": "alice"} | claims
    return jwt.encode(
        {k: v for k, v in body.items() if v is not None}, key, algorithm=algorithm, headers={"kid": kid}
    )


class Sure(BaseModel):
    ok: bool


class Amount(BaseModel):
    cents: int


def sure() -> Elicit[Sure]:
    return Elicit("Pay?", Sure)


def amount(confirmed: Annotated[Sure, Resolve(sure)]) -> Elicit[Amount]:
    return Elicit(f"How much ({confirmed.ok})?", Amount)


def shop() -> MCPServer:
    mcp = MCPServer("Shop")

    @mcp.tool()
    def pay(to: str, paid: Annotated[Amount, Resolve(amount)]) -> str:
        return f"paid {paid.cents} to {to}"

    return mcp


class Verifier:
    """A verifier of this test's own: raises for one token, else defers to the JWT one."""

    def __init__(self, inner: JwtVerifier) -> None:
        self.inner = inner

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == "explode":
            raise RuntimeError("the key service is down")
        return await self.inner.verify_token(token)


@pytest.fixture
async def url(tmp_path: Path) -> AsyncIterator[str]:
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(key_set()))
    verifier = Verifier(JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_file=keys))
    auth = AuthSettings(issuer_url=ISSUER, resource_server_url=AUDIENCE)
    serve = partial(serve_http, shop(), "127.0.0.1", 0, log_level="warning")
    async with anyio.create_task_group() as group:
        port = await group.start(partial(serve, token_verifier=verifier, auth=auth))
        yield f"http://127.0.0.1:{port}/mcp"
        group.cancel_scope.cancel()


def call(arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"name": "pay", "arguments": arguments, "_meta": MODERN_META, **extra}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


async def post(client: httpx2.AsyncClient, url: str, bearer: str, body: dict[str, Any]) -> httpx2.Response:
    headers = modern_headers("tools/call", "pay", authorization=f"Bearer {bearer}")
    return await client.post(url, json=body, headers=headers)


async def rounds_until_last(client: httpx2.AsyncClient, url: str, bearer: str) -> dict[str, Any]:
    """Alice's call up to its final round: the body that round sends (answer and state)."""
    arguments = {"to": "bob"}
    first = (await post(client, url, bearer, call(arguments))).json()["result"]
    (key,) = first["inputRequests"]
    answered = {key: {"action": "accept", "content": {"ok": True}}}
    second_body = call(arguments, inputResponses=answered, requestState=first["requestState"])
    second = (await post(client, url, bearer, second_body)).json()["result"]
    (key,) = second["inputRequests"]
    answered = {key: {"action": "accept", "content": {"cents": 500}}}
    return call(arguments, inputResponses=answered, requestState=second["requestState"])


@pytest.mark.parametrize(
    ("signer", "algorithm", "kid"),
    [(EC_KEY, "ES256", "rsa-1"), (RSA_KEY, "RS256", "ec-1"), (RSA_KEY, "PS256", "ec-1")],
    ids=["ES256 with the RSA key's id", "RS256 with the EC key's id", "PS256 with the EC key's id"],
)
async def test_a_token_naming_a_key_of_another_type_is_401_not_500(
    url: str, signer: Any, algorithm: str, kid: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcpdi_transport")
    async with httpx2.AsyncClient(timeout=10) as client:
        answer = await post(client, url, token(signer, algorithm, kid), call({"to": "bob"}))
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert answer.json() == {"error": "invalid_token", "error_description": "Invalid or expired token"}
    kind = "RSA" if kid == "rsa-1" else "EC"
    assert f"refused a bearer token (algorithm): algorithm '{algorithm}' is not allowed for a {kind} key" in (
        caplog.messages
    )


async def test_a_verifier_that_raises_refuses_the_token(url: str, caplog: pytest.LogCaptureFixture) -> None:
    async with httpx2.AsyncClient(timeout=10) as client:
        answer = await post(client, url, "explode", call({"to": "bob"}))
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_token"
    assert "the token verifier raised; refusing the token" in caplog.messages


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (lambda: token(exp=int(time.time()) - 3600), "expiry"),
        (lambda: token(aud="http://elsewhere/mcp"), "audience"),
        (lambda: token(iss="https://evil.example"), "issuer"),
        (lambda: token(kid="rsa-9"), "key id"),
        (lambda: token(EC_KEY, "ES256", "ec-1")[:-6] + "AAAAAA", "signature"),
        (lambda: token(nbf=int(time.time()) + 3600), "not yet valid"),
        (lambda: "not.a.jwt", "malformed"),
    ],
    ids=["expired", "audience", "issuer", "kid", "signature", "nbf", "garbage"],
)
async def test_a_refused_token_logs_why_and_answers_the_same(
    url: str, bad: Callable[[], str], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcpdi_transport")
    async with httpx2.AsyncClient(timeout=10) as client:
        answer = await post(client, url, bad(), call({"to": "bob"}))
    assert answer.status_code == 401
    assert answer.json() == {"error": "invalid_token", "error_description": "Invalid or expired token"}
    refusals = [message for message in caplog.messages if message.startswith("refused a bearer token")]
    assert len(refusals) == 1
    assert refusals[0].startswith(f"refused a bearer token ({reason}): ")


@pytest.mark.parametrize(
    ("owner", "other"),
    [
        ({"client_id": "app", "sub": "alice"}, {"client_id": "app|alice", "sub": None}),
        ({"client_id": "app|alice", "sub": None}, {"client_id": "app", "sub": "alice"}),
        ({"client_id": "app", "sub": "y|x"}, {"client_id": "app|y", "sub": "x"}),
    ],
    ids=["client app + sub alice", "client app|alice", "app + y|x against app|y + x"],
)
async def test_principals_that_would_join_alike_do_not_share_rounds(
    url: str, owner: dict[str, Any], other: dict[str, Any]
) -> None:
    async with httpx2.AsyncClient(timeout=10) as client:
        last = await rounds_until_last(client, url, token(**owner))
        stolen = (await post(client, url, token(**other), last)).json()
        own = (await post(client, url, token(**owner), last)).json()
    assert stolen["error"] == {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }
    assert own["result"]["content"][0]["text"] == "paid 500 to bob"


async def test_another_callers_final_round_leaves_the_owners_round_unspent(url: str) -> None:
    async with httpx2.AsyncClient(timeout=10) as client:
        last = await rounds_until_last(client, url, token())
        stolen = (await post(client, url, token(sub="mallory"), last)).json()
        client_only = await post(client, url, token(sub=None), last)
        own = (await post(client, url, token(), last)).json()
        again = (await post(client, url, token(), last)).json()
    assert stolen["error"]["code"] == -32602
    assert client_only.json()["error"]["code"] == -32602
    assert own["result"]["content"][0]["text"] == "paid 500 to bob"
    assert again["error"]["code"] == -32602  # and then it is spent


def test_the_principal_is_a_canonical_pair() -> None:
    assert (
        principal_of(AccessToken(token="t", client_id="app", scopes=[], subject="alice")) == '["app","alice"]'
    )
    assert principal_of(AccessToken(token="t", client_id="app|alice", scopes=[])) == '["app|alice",null]'
    assert principal_of(None) is None
