"""A request finds its asyncio loop without asking asyncio: on Python 3.11 each ask is a system call.

The app's lifespan keeps its loop and thread (`HomeLoop`); a request on that thread while
that loop runs takes it from there. Any other thread, a loop that stopped, or trio asks
asyncio as before, so the answer is always the loop running the caller.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from transport_asgi import http_client, modern_headers, open_legacy_session

from mcpdi import MCPServer
from mcpdi_transport._http import _app, _loop, _modern, _security
from mcpdi_transport._http._app import build_http_app
from mcpdi_transport._http._loop import HomeLoop, running_loop

pytestmark = pytest.mark.anyio

mcp = MCPServer("home-loop")


@mcp.tool()
async def echo(text: str) -> str:
    """Says it back."""
    return text


def _counting_asks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every `running_loop` the HTTP modules call, counted (one entry per ask)."""
    asks: list[int] = []

    def counted() -> asyncio.AbstractEventLoop | None:
        asks.append(1)
        return running_loop()

    for module in (_loop, _app, _modern, _security):
        monkeypatch.setattr(module, "running_loop", counted)
    return asks


def _call(id_: int) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": f"hi {id_}"}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_requests_on_the_lifespans_loop_never_ask_asyncio_for_it(
    era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build_http_app(mcp, json_response=True)
    async with http_client(app) as client:
        modern = era == "2026-07-28"
        headers = modern_headers("tools/call", "echo") if modern else await open_legacy_session(client)
        asks = _counting_asks(monkeypatch)
        texts: list[str] = []
        for id_ in range(5):
            body = _call(id_)
            if modern:
                body["params"]["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": era,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            response = await client.post("/mcp", json=body, headers=headers)
            texts.append(response.json()["result"]["content"][0]["text"])
    assert texts == [f"hi {n}" for n in range(5)]
    assert asks == []


async def test_on_its_own_loop_the_home_loop_is_the_running_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    home = HomeLoop()
    asks = _counting_asks(monkeypatch)
    assert home.running() is asyncio.get_running_loop()
    assert asks == []


def _in_thread(work: Callable[[], Any]) -> Any:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    return result[0]


async def test_another_threads_loop_is_asked_for_and_found() -> None:
    home = HomeLoop()

    async def there() -> tuple[Any, Any]:
        return home.running(), asyncio.get_running_loop()

    found, theirs = _in_thread(lambda: asyncio.run(there()))
    assert found is theirs
    assert found is not asyncio.get_running_loop()
    assert _in_thread(home.running) is None  # a thread running no loop has none


def test_a_stopped_home_loop_gives_way_to_the_loop_running_now() -> None:
    async def make() -> HomeLoop:
        return HomeLoop()

    home = asyncio.run(make())  # its loop has stopped (and closed) since

    async def later() -> tuple[Any, Any]:
        return home.running(), asyncio.get_running_loop()

    found, running = asyncio.run(later())
    assert found is running
    assert home.running() is None  # no loop runs here now


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio_there_is_no_asyncio_loop(anyio_backend: str) -> None:
    assert HomeLoop().running() is None
