"""A server for shutdown tests: calls that sleep (cancellable) or block a thread (not); `mcp` and `app`.

Each call says on stderr that it started.
"""

from __future__ import annotations

import sys
import time

import anyio

from mcpdi import MCPServer
from mcpdi_transport import build_http_app

mcp = MCPServer("Grace")


@mcp.tool()
async def pause(seconds: float) -> str:
    """Sleep on the event loop."""
    print(f"started pause {seconds}", file=sys.stderr, flush=True)
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@mcp.tool()
def block(seconds: float) -> str:
    """Block a worker thread, which no cancellation interrupts."""
    print(f"started block {seconds}", file=sys.stderr, flush=True)
    time.sleep(seconds)
    return f"blocked {seconds}"


app = build_http_app(mcp, shutdown_grace=2.0)
