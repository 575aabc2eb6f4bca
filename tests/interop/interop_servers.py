"""Serving the interop test servers: uvicorn on 127.0.0.1 (a free port) and stdio commands."""

from __future__ import annotations

import importlib
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
import uvicorn

SERVERS = Path(__file__).parent / "servers"


def python_command(script: Path, *args: str) -> list[str]:
    """The argv that runs `script` with this interpreter."""
    return [sys.executable, str(script), *args]


def load_server_module(name: str) -> ModuleType:
    """Import `tests/interop/servers/<name>.py` (once per session)."""
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(SERVERS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SERVERS))


@asynccontextmanager
async def serve_app(app: Any, path: str = "/mcp") -> AsyncGenerator[str]:
    """Serve an ASGI app with uvicorn on a socket bound to a free 127.0.0.1 port; yield its URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none", access_log=False)
    server = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{port}{path}"
            finally:
                server.should_exit = True  # the task group then waits for uvicorn's graceful shutdown
    finally:
        sock.close()


def target_of(request: pytest.FixtureRequest, served: str) -> Any:
    """What a client connects to for `served`, `KIND-TRANSPORT` (`sdk-http`, `mcpdi-memory`, ...).

    The server object for `memory`, else the URL or stdio argv from this folder's fixtures.
    """
    kind, transport = served.split("-")
    if transport == "memory":
        return load_server_module(f"{kind}_server").server
    return request.getfixturevalue(f"{kind}_{transport}_{'url' if transport == 'http' else 'command'}")


def sdk_app(**options: Any) -> Any:
    """The official SDK's test server as a Streamable HTTP app."""
    return load_server_module("sdk_server").server.streamable_http_app(**options)


def mcpdi_app(**options: Any) -> Any:
    """mcpdi's test server as a Streamable HTTP app."""
    return load_server_module("mcpdi_server").server.streamable_http_app(**options)


class RecordingApp:
    """An ASGI wrapper that records each POST's `Mcp-Method` header and response status."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[tuple[str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        method = headers.get(b"mcp-method", b"").decode()

        async def recording_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.exchanges.append((method, message["status"]))
            await send(message)

        await self.app(scope, receive, recording_send)
