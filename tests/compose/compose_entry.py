"""Serve `compose_server.mcp` through one programmatic entry point: `python compose_entry.py ENTRY PORT`."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import uvicorn
from compose_server import mcp

from mcpdi_transport import build_http_app, serve_http

OPTIONS: dict[str, Any] = {
    "allowed_hosts": ["127.0.0.1:*", "mcp.test:*"],
    "allowed_origins": ["https://app.test"],
    "session_id_prefix": "cell-",
}


def main(entry: str, port: int) -> None:
    if entry == "streamable_http_app":
        app = mcp.streamable_http_app(streamable_http_path="/rpc", **OPTIONS)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    elif entry == "lowlevel.streamable_http_app":
        app = mcp.server.streamable_http_app(path="/rpc", **OPTIONS)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    elif entry == "build_http_app":
        uvicorn.run(
            build_http_app(mcp, path="/rpc", **OPTIONS), host="127.0.0.1", port=port, log_level="warning"
        )
    elif entry == "serve_http":
        anyio.run(lambda: serve_http(mcp, "127.0.0.1", port, path="/rpc", log_level="warning", **OPTIONS))
    elif entry == "mcp.run":
        mcp.run("streamable-http", port=port, streamable_http_path="/rpc", log_level="warning", **OPTIONS)
    else:
        raise SystemExit(f"unknown entry point {entry!r}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
