"""Each port server is written once for the reference SDK and run twice: as written, and ported.

Porting is what a user does: replace the SDK's import lines with `from mcpdi import ...`.
Both servers are then driven by the official `mcp` client (the SDK's server in memory,
mcpdi's over real Streamable HTTP on 127.0.0.1) and their transcripts compared.
"""

from __future__ import annotations

import socket
import sys
import types
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
import uvicorn
from mcp import Client
from mcp.shared.exceptions import MCPError as SdkMCPError
from pydantic import BaseModel

SERVERS = Path(__file__).parent / "servers"
Flavour = Literal["sdk", "mcpdi"]
FLAVOURS: tuple[Flavour, ...] = ("sdk", "mcpdi")
MODES = ("legacy", "2026-07-28")

# The only edit a port makes: where the names come from.
_SWAPS = (
    ("from mcp.server.mcpserver.exceptions import ", "from mcpdi import "),
    ("from mcp.server.mcpserver import ", "from mcpdi import "),
    ("from mcp.shared.exceptions import ", "from mcpdi import "),
    ("from mcp.server.auth.settings import ", "from mcpdi import "),
    ("from mcp.server.auth.provider import ", "from mcpdi import "),
    ("from mcp.server.auth.middleware.auth_context import ", "from mcpdi import "),
    ("from mcp.server.transport_security import ", "from mcpdi import "),
    ("from mcp.server.lowlevel import ", "from mcpdi import "),
    ("from mcp.server.extension import ", "from mcpdi import "),
    ("from mcp.server.subscriptions import ", "from mcpdi import "),
    ("from mcp import InvalidUriTemplate", "from mcpdi import InvalidUriTemplate"),
    ("from mcp.server.fastmcp", "from mcpdi.compat.fastmcp"),  # the SDK's 1.x spelling
)


def ported(source: str) -> str:
    """`source` with its SDK import lines pointed at mcpdi; every other line unchanged."""
    lines: list[str] = []
    for line in source.splitlines():
        for old, new in _SWAPS:
            if line.startswith(old):
                line = new + line.removeprefix(old)
        lines.append(line)
    result = "\n".join(lines) + "\n"
    assert "mcp.server" not in result, "a port server imports an SDK module the swap does not cover"
    return result


def load(name: str, flavour: Flavour) -> types.ModuleType:
    """`servers/<name>.py` as written (`sdk`) or ported (`mcpdi`), imported as a fresh module."""
    module_name = f"port_{name}_{flavour}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    source = (SERVERS / f"{name}.py").read_text()
    if flavour == "mcpdi":
        source = ported(source)
    module = types.ModuleType(module_name)
    module.__file__ = str(SERVERS / f"{name}.py")
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up by name
    exec(compile(source, f"{module.__file__} ({flavour})", "exec"), module.__dict__)
    return module


@asynccontextmanager
async def serve(app: Any, path: str = "/mcp") -> AsyncGenerator[str]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port; yield the URL of `path`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{port}{path}"
            finally:
                server.should_exit = True
    finally:
        sock.close()


@asynccontextmanager
async def connect(flavour: Flavour, server: Any, mode: str, **options: Any) -> AsyncGenerator[Client]:
    """The official client on `server`: in memory for the SDK's, over HTTP for mcpdi's."""
    with anyio.fail_after(30):
        if flavour == "sdk":
            async with Client(server, mode=mode, **options) as client:
                yield client
        else:
            async with (
                serve(server.streamable_http_app()) as url,
                Client(url, mode=mode, **options) as client,
            ):
                yield client


def wire(value: Any) -> Any:
    """A result as the client saw it, as plain JSON data (pydantic models dumped by alias)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [wire(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


async def outcome(call: Awaitable[Any]) -> Any:
    """What a request ended with: its result as data, or the JSON-RPC error's code and message."""
    try:
        return wire(await call)
    except SdkMCPError as error:
        return {"error": error.error.code, "message": error.error.message}


Scenario = Callable[[Client], Awaitable[Any]]

# A raw handshake-era `initialize` POST, for tests that look at HTTP statuses and SSE frames.
INITIALIZE_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def initialize(protocol_version: str = "2025-11-25") -> dict[str, Any]:
    client = {"name": "port", "version": "1"}
    params = {"protocolVersion": protocol_version, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


async def transcripts(name: str, mode: str, scenario: Scenario, **options: Any) -> dict[Flavour, Any]:
    """The scenario's transcript against both flavours of `servers/<name>.py`."""
    seen: dict[Flavour, Any] = {}
    for flavour in FLAVOURS:
        module = load(name, flavour)
        async with connect(flavour, module.mcp, mode, **options) as client:
            seen[flavour] = await scenario(client)
    return seen


def text(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text
