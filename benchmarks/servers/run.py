"""`python -m benchmarks.servers.run IMPL --graphs none,one`: serve one implementation with uvicorn.

Every implementation gets the same uvicorn settings (`UVICORN_SETTINGS`): one process, the
asyncio loop, h11, log level warning, no access log; `--uvicorn standard` swaps in uvloop
and httptools (`uvicorn[standard]`) for every implementation alike. The socket is bound here on
127.0.0.1 port 0 and listening before uvicorn starts; its port is printed as the first
line of stdout (`port N`), so the caller can connect right away (connections wait in the
backlog until the app's lifespan has started).
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.graphs import Graph
from benchmarks.servers import select_graphs

UVICORN_SETTINGS: dict[str, Any] = {
    "log_level": "warning",
    "access_log": False,
    "loop": "asyncio",
    "http": "h11",
    "lifespan": "on",
    "workers": 1,
}
# What `--uvicorn` changes: the event loop and the HTTP parser, nothing else.
STACKS: dict[str, dict[str, Any]] = {
    "plain": {"loop": "asyncio", "http": "h11"},
    "standard": {"loop": "uvloop", "http": "httptools"},
}
IMPLS = ("mcpdi", "mcp", "ceiling")


def app_builder(impl: str) -> Callable[[Sequence[Graph]], Any]:
    if impl == "mcpdi":
        from benchmarks.servers import mcpdi_server

        return mcpdi_server.build_app
    if impl == "mcp":
        from benchmarks.servers import mcp_server

        return mcp_server.build_app
    from benchmarks.servers import ceiling

    return ceiling.build_app


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.servers.run", description=__doc__)
    parser.add_argument("impl", choices=IMPLS)
    parser.add_argument("--graphs", default="none,one", help="comma-separated graph names")
    parser.add_argument(
        "--uvicorn",
        choices=tuple(STACKS),
        default="plain",
        help="asyncio + h11 (plain) or uvloop + httptools",
    )
    args = parser.parse_args(argv)
    import uvicorn

    app = app_builder(args.impl)(select_graphs(args.graphs.split(",")))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, **(UVICORN_SETTINGS | STACKS[args.uvicorn]))
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    sys.exit(0)


if __name__ == "__main__":
    main()
