"""The interop test server built with mcpdi (its tools are in `interop_server.py`).

Tests serve it on stdio with the `mcpdi run` command and import `server` to serve it over HTTP.
"""

from __future__ import annotations

from interop_server import build_server

import mcpdi

server = build_server(
    mcpdi,
    "mcpdi-server",
    instructions="mcpdi's interop test server.",
    greeting_text="hello from mcpdi",
)

if __name__ == "__main__":
    server.run()
