"""A server for shutdown tests: calls that sleep (cancellable) or block a thread (not); `mcp` and `app`.

Each call says on stderr that it started, in one write of its own whole line: a thread's
`print` and the loop's could interleave (text, then each newline), merging two lines into one.
"""

from __future__ import annotations

import os
import time

import anyio

from mcpdi import MCPServer
from mcpdi_transport import build_http_app

mcp = MCPServer("Grace")


def said(line: str) -> None:
    os.write(2, f"{line}\n".encode())


@mcp.tool()
async def pause(seconds: float) -> str:
    """Sleep on the event loop."""
    said(f"started pause {seconds}")
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@mcp.tool()
def block(seconds: float) -> str:
    """Block a worker thread, which no cancellation interrupts."""
    said(f"started block {seconds}")
    time.sleep(seconds)
    return f"blocked {seconds}"


app = build_http_app(mcp, shutdown_grace=2.0)
