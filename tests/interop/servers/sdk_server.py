"""The interop test server built with the official SDK (`mcp` 2.3.0), for mcpdi's client to talk to.

Its tools are in `interop_server.py`. Run as a script it serves stdio; tests import `server` to
serve it over HTTP.
"""

from __future__ import annotations

import warnings
from typing import Any

from interop_server import build_server
from mcp.server import mcpserver


async def log_deprecated_info(ctx: Any, message: str) -> None:
    with warnings.catch_warnings():  # logging is deprecated at 2026-07-28, and still served
        warnings.simplefilter("ignore")
        await ctx.info(message)


server = build_server(
    mcpserver,
    "sdk-server",
    instructions="The official SDK's test server.",
    greeting_text="hello from the sdk",
    log=log_deprecated_info,
)

if __name__ == "__main__":
    server.run()
