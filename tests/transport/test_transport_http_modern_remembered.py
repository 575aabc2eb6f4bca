"""A 2026-07-28 request gets the same answer whether its envelope, the wire check of its `_meta` and
its result's stamp come from what the server kept from earlier requests or are worked out anew."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import httpx2
import pytest
from transport_asgi import MODERN_META, modern_headers, uvicorn_serving

from mcpdi import Header, MCPServer
from mcpdi.lowlevel import _envelope, _runner

pytestmark = pytest.mark.anyio

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def bookshop() -> MCPServer:
    mcp = MCPServer("Bookshop", version="1.0")

    @mcp.tool()
    def check_stock(title: str, region: Annotated[str, Header("Region")] = "EU") -> str:
        return f"{title}: 3 copies in {region}."

    @mcp.tool()
    def count(title: str) -> dict[str, int]:
        return {"letters": len(title)}

    @mcp.tool()
    def collapse(title: str) -> str:
        raise ValueError(f"the shelf with {title} collapsed")

    return mcp


def call(id_: int, name: str, meta: Any, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }


def exchanges() -> Iterator[tuple[dict[str, str], dict[str, Any]]]:
    """Requests in an order that reuses, changes and breaks the envelope, each one good call apart."""
    stock = {**modern_headers("tools/call", "check_stock"), "mcp-param-region": "EU"}
    good = (stock, {"title": "Dune", "region": "EU"})
    metas: list[Any] = [
        MODERN_META,
        MODERN_META,
        *({**MODERN_META, "progressToken": token} for token in ("p-1", 2, "p-3", True, 1.5, [4], None)),
        *({**MODERN_META, "trace": {"hop": hop}} for hop in range(3)),
        {**MODERN_META, CAPABILITIES_KEY: {"roots": {"listChanged": True}}},
        {**MODERN_META, CAPABILITIES_KEY: {"roots": {"listChanged": 1}}},
        {**MODERN_META, CAPABILITIES_KEY: []},
        {**MODERN_META, INFO_KEY: None},
        {key: value for key, value in MODERN_META.items() if key != INFO_KEY},
        {**MODERN_META, INFO_KEY: {"name": "no version"}},
        {**MODERN_META, LEVEL_KEY: "error"},
        {**MODERN_META, LEVEL_KEY: "loud"},
        {key: value for key, value in MODERN_META.items() if key != CAPABILITIES_KEY},
        "not an object",
        None,
    ]
    id_ = 0
    for meta in metas:
        for headers, arguments in (good, (modern_headers("tools/call", "count"), {"title": "Dune"})):
            id_ += 1
            yield headers, call(id_, headers["mcp-name"], meta, **arguments)
    wrong_headers = [
        modern_headers("tools/call", "check_stock", **{"mcp-protocol-version": "2099-01-01"}),
        modern_headers("tools/call", "check_stock", **{"mcp-param-region": "US"}),
        modern_headers("tools/call", "check_stock", **{"mcp-param-region": "caf\u00e9"}),
        modern_headers("tools/call", "count"),
        modern_headers("tools/list", "check_stock"),
    ]
    for headers in wrong_headers:
        for meta in (MODERN_META, {**MODERN_META, VERSION_KEY: "2099-01-01"}):
            id_ += 1
            yield headers, call(id_, "check_stock", meta, title="Dune", region="EU")
            id_ += 1
            yield good[0], call(id_, "check_stock", MODERN_META, title="Dune", region="EU")
    for name in ("collapse", "count", "collapse"):
        id_ += 1
        yield modern_headers("tools/call", name), call(id_, name, MODERN_META, title="Dune")


async def answers(**options: Any) -> list[tuple[int, str, bytes]]:
    out: list[tuple[int, str, bytes]] = []
    async with uvicorn_serving(bookshop().server, **options) as port, httpx2.AsyncClient() as client:
        for headers, body in exchanges():
            sent = {name.encode(): value.encode("latin-1") for name, value in headers.items()}
            response = await client.post(
                f"http://127.0.0.1:{port}/mcp", content=json.dumps(body), headers=sent
            )
            out.append((response.status_code, response.headers.get("content-type", ""), response.content))
    return out


@contextmanager
def worked_out_anew(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing kept: each envelope read anew, `_meta` checked by the wire type, the stamp built and sieved."""
    with monkeypatch.context() as patch:
        patch.setattr(_envelope._ReadEnvelope, "fits", lambda self, meta: False)  # pyright: ignore[reportPrivateUsage]
        patch.setattr(_runner, "tool_call_params_pass", lambda *args: False)
        patch.setattr(_runner, "sieve_stamped_tool_result", lambda *args: None)
        patch.setattr(_runner, "sieve_plain_tool_result", lambda *args: None)
        yield


@pytest.mark.parametrize("json_response", [True, False])
async def test_every_answer_from_what_the_server_kept_is_the_answer_worked_out_anew(
    monkeypatch: pytest.MonkeyPatch, json_response: bool
) -> None:
    kept = await answers(json_response=json_response)
    with worked_out_anew(monkeypatch):
        anew = await answers(json_response=json_response)
    assert len(kept) == len(anew)
    for index, (mine, theirs) in enumerate(zip(kept, anew, strict=True)):
        assert mine == theirs, index
    statuses = {status for status, _, _ in kept}
    assert statuses == {200, 400}  # errors of every rung were among them
    bodies = [json.loads(body) for _, _, body in kept]
    codes = {body["error"]["code"] for body in bodies if "error" in body}
    assert codes == {-32020, -32022, -32602}
    assert bodies[0]["result"] == {
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "Bookshop", "version": "1.0"}},
        "content": [{"text": "Dune: 3 copies in EU.", "type": "text"}],
        "isError": False,
        "resultType": "complete",
        "structuredContent": {"result": "Dune: 3 copies in EU."},
    }
