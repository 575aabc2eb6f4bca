"""SIGTERM on a real HTTP server process: running calls get the grace, then a JSON-RPC error, never a 500."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
SHUTTING_DOWN = {"code": -32603, "message": "The server is shutting down"}


def sleep_call(id_: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "sleep", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def test_sigterm_answers_running_calls_in_both_eras_with_an_error_after_the_grace() -> None:
    command = [sys.executable, str(HERE / "transport_http_process.py"), "shutdown_grace=0.5"]
    async with await anyio.open_process(command, cwd=HERE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        with anyio.fail_after(30):
            port = int((await process.stdout.receive()).decode().strip())
        url = f"http://127.0.0.1:{port}/mcp"
        answers: dict[str, Any] = {}

        async def modern_call(client: httpx2.AsyncClient) -> None:
            response = await client.post(
                url, json=sleep_call(1, MODERN_META), headers=modern_headers("tools/call", "sleep")
            )
            answers["modern"] = (response.status_code, response.json())

        async def legacy_call(
            client: httpx2.AsyncClient, headers: dict[str, str], started: anyio.Event
        ) -> None:
            async with client.stream("POST", url, json=sleep_call(2), headers=headers) as response:
                messages: list[dict[str, Any]] = []
                async for event in httpx2.EventSource(response):
                    started.set()
                    if event.data:
                        messages.append(json.loads(event.data))
                answers["legacy"] = (response.status_code, messages)

        async with httpx2.AsyncClient(timeout=20) as client, anyio.create_task_group() as group:
            group.start_soon(modern_call, client)
            opened = await client.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
            headers = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await client.post(url, json=initialized, headers=headers)
            started = anyio.Event()
            group.start_soon(legacy_call, client, headers, started)
            with anyio.fail_after(10):
                await started.wait()
            process.send_signal(signal.SIGTERM)
        with anyio.fail_after(15):
            await process.wait()
        errors = b""
        with anyio.fail_after(5):
            async for chunk in process.stderr:
                errors += chunk
    assert answers["modern"] == (200, {"jsonrpc": "2.0", "id": 1, "error": SHUTTING_DOWN})
    assert answers["legacy"] == (200, [{"jsonrpc": "2.0", "id": 2, "error": SHUTTING_DOWN}])
    assert b"Exception in ASGI application" not in errors
    assert b"Traceback" not in errors
