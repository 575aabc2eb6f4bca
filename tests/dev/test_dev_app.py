"""The dev app over real uvicorn: the page's files, its JSON endpoints, Host/Origin checks, reloading."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from inline_snapshot import snapshot

from mcpdi_transport._cli import find_server, load_module
from mcpdi_transport._dev._run import serve_dev

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = ROOT / "examples" / "bookshop.py"
MODERN_HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/list",
}
MODERN_LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def loader(path: Path) -> Callable[[], Any]:
    return lambda: find_server(load_module(path), path, None)


@asynccontextmanager
async def dev_server(path: Path, out: io.StringIO | None = None) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        with anyio.fail_after(30):
            port = await group.start(partial(serve_dev, loader(path), path, 0, out=out))
        yield f"http://127.0.0.1:{port}"
        group.cancel_scope.cancel()


async def tool_names(client: httpx2.AsyncClient, url: str) -> list[str]:
    response = await client.post(f"{url}/mcp", json=MODERN_LIST, headers=MODERN_HEADERS)
    return [tool["name"] for tool in response.json()["result"]["tools"]]


async def test_the_page_and_its_files_come_from_the_package_and_may_reach_only_their_origin() -> None:
    async with dev_server(BOOKSHOP) as url, httpx2.AsyncClient(timeout=10) as client:
        page = await client.get(f"{url}/")
        script = await client.get(f"{url}/static/page.js")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/static/page.js">' in page.text
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "http" not in page.text.replace('lang="en"', "")  # no address elsewhere in the page


async def test_an_unknown_file_of_the_page_is_404_naming_it() -> None:
    async with dev_server(BOOKSHOP) as url, httpx2.AsyncClient(timeout=10) as client:
        missing = await client.get(f"{url}/static/..%2F_app.py")
        other = await client.get(f"{url}/static/nope.js")
    assert missing.status_code == 404
    assert other.json() == snapshot({"error": "no file named 'nope.js' in the page"})


async def test_the_url_is_printed_once_the_server_accepts_connections() -> None:
    out = io.StringIO()
    async with dev_server(BOOKSHOP, out) as url:
        printed = out.getvalue()
    assert printed == (
        f"mcpdi dev: {url}/  (MCP endpoint {url}/mcp)\n"
        f"mcpdi dev: watching {BOOKSHOP} for changes; Ctrl-C stops\n"
    )


@pytest.mark.parametrize("path", ["/", "/static/page.js", "/dev/status", "/dev/graph/order_book", "/mcp"])
async def test_a_foreign_host_or_origin_is_refused_on_every_route(path: str) -> None:
    async with dev_server(BOOKSHOP) as url, httpx2.AsyncClient(timeout=10) as client:
        host = await client.get(f"{url}{path}", headers={"host": "evil.example"})
        origin = await client.get(f"{url}{path}", headers={"origin": "http://evil.example"})
        local = await client.get(f"{url}{path}", headers={"origin": "http://localhost:3000"})
    assert (host.status_code, host.text) == (421, "Invalid Host header")
    assert (origin.status_code, origin.text) == (403, "Invalid Origin header")
    assert local.status_code not in (403, 421)


async def test_the_graph_is_the_tools_explanation_as_mcpdi_graph_prints_it() -> None:
    from mcpdi.engine import explanation_record

    async with dev_server(BOOKSHOP) as url, httpx2.AsyncClient(timeout=10) as client:
        record = (await client.get(f"{url}/dev/graph/order_book")).json()
    (explanation,) = find_server(load_module(BOOKSHOP), BOOKSHOP, None).explain("order_book")
    assert record == json.loads(json.dumps(explanation_record(explanation)))
    names = {r["key"]: r["name"] for r in record["resolvers"]}
    reads = [
        (r["name"], [(i["parameter"], i["source"], names.get(i["from"], i["from"])) for i in r["reads"]])
        for r in record["resolvers"]
    ]
    assert reads == snapshot(
        [
            ("check_stock", [("title", "argument", "title")]),
            ("confirm_backorder", [("title", "argument", "title"), ("stock", "resolved", "check_stock")]),
        ]
    )
    assert [r["asks"] for r in record["resolvers"]] == [[], ["elicitation/create"]]
    assert (record["capabilities"], record["worstCaseRounds"]) == (["elicitation"], 1)


async def test_the_graph_of_an_unknown_tool_is_404_naming_it() -> None:
    async with dev_server(BOOKSHOP) as url, httpx2.AsyncClient(timeout=10) as client:
        response = await client.get(f"{url}/dev/graph/nope")
    assert (response.status_code, response.json()) == snapshot((404, {"error": "no tool named 'nope'"}))


async def test_a_low_level_server_is_served_but_has_no_graph(tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text("from mcpdi import Server\n\nserver = Server('Plain')\n")
    async with dev_server(path) as url, httpx2.AsyncClient(timeout=10) as client:
        status = (await client.get(f"{url}/dev/status")).json()
        response = await client.get(f"{url}/dev/graph/anything")
    assert status["server"] == "Plain"
    assert (response.status_code, response.json()) == snapshot(
        (409, {"error": "a low-level Server has no resolver plans; only an MCPServer's tools have a graph"})
    )


SHOP = """\
from mcpdi import MCPServer

mcp = MCPServer("Shop")


@mcp.tool()
def {name}() -> str:
    return "hi"
"""


async def wait_for_status(
    client: httpx2.AsyncClient, url: str, check: Callable[[dict[str, Any]], bool]
) -> None:
    with anyio.fail_after(20):
        while not check((await client.get(f"{url}/dev/status")).json()):
            await anyio.sleep(0.05)


async def test_a_changed_file_is_served_again_and_a_broken_one_keeps_the_last_good_version(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shop.py"
    path.write_text(SHOP.replace("{name}", "hello"))
    async with dev_server(path) as url, httpx2.AsyncClient(timeout=10) as client:
        assert await tool_names(client, url) == ["hello"]

        path.write_text(SHOP.replace("{name}", "goodbye"))
        await wait_for_status(client, url, lambda status: status["version"] == 2)
        assert await tool_names(client, url) == ["goodbye"]

        path.write_text("from mcpdi import MCPServer\nmcp = MCPServer(\n")
        await wait_for_status(client, url, lambda status: status["reloadError"] is not None)
        status = (await client.get(f"{url}/dev/status")).json()
        assert await tool_names(client, url) == ["goodbye"]

        path.write_text(SHOP.replace("{name}", "again"))
        await wait_for_status(client, url, lambda status: status["version"] == 3)
        healed = (await client.get(f"{url}/dev/status")).json()
    assert status["version"] == 2
    assert (
        status["reloadError"]
        == f"cannot import {path} (line 2: mcp = MCPServer(): SyntaxError: '(' was never closed"
    )
    assert healed["reloadError"] is None


async def test_a_reload_whose_lifespan_fails_keeps_the_last_good_version(tmp_path: Path) -> None:
    path = tmp_path / "shop.py"
    path.write_text(SHOP.replace("{name}", "hello"))
    async with dev_server(path) as url, httpx2.AsyncClient(timeout=10) as client:
        path.write_text(
            "from contextlib import asynccontextmanager\n"
            "from mcpdi import MCPServer\n\n"
            "@asynccontextmanager\n"
            "async def lifespan(server):\n"
            "    raise RuntimeError('the database is not reachable')\n"
            "    yield\n\n"
            "mcp = MCPServer('Shop', lifespan=lifespan)\n"
        )
        await wait_for_status(client, url, lambda status: status["reloadError"] is not None)
        status = (await client.get(f"{url}/dev/status")).json()
        names = await tool_names(client, url)
    assert (status["version"], status["reloadError"], names) == snapshot(
        (1, "the server's lifespan failed: RuntimeError: the database is not reachable", ["hello"])
    )


async def test_a_legacy_session_ends_with_the_reload_and_the_next_one_sees_the_new_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shop.py"
    path.write_text(SHOP.replace("{name}", "hello"))
    headers = {"accept": "application/json, text/event-stream"}
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with dev_server(path) as url, httpx2.AsyncClient(timeout=10) as client:
        opened = await client.post(f"{url}/mcp", json=opening, headers=headers)
        session = {
            **headers,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        path.write_text(SHOP.replace("{name}", "goodbye"))
        await wait_for_status(client, url, lambda status: status["version"] == 2)
        stale = await client.post(f"{url}/mcp", json=listing, headers=session)
        reopened = await client.post(f"{url}/mcp", json=opening, headers=headers)
        fresh = {**session, "mcp-session-id": reopened.headers["mcp-session-id"]}
        async with client.stream("POST", f"{url}/mcp", json=listing, headers=fresh) as response:
            events = [json.loads(event.data) async for event in httpx2.EventSource(response) if event.data]
    assert stale.status_code == 404
    assert [tool["name"] for tool in events[-1]["result"]["tools"]] == ["goodbye"]
