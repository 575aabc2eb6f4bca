"""Serve the sample server over HTTP on a free loopback port; print the port; stop on SIGTERM.

Usage: python transport_http_process.py [serve_http keyword=value ...] (values are floats or ints).
"""

from __future__ import annotations

import sys
from functools import partial

import anyio
from transport_sample_server import server

from mcpdi_transport._serve import serve_http


def _option(text: str) -> tuple[str, float | int]:
    name, _, value = text.partition("=")
    return name, float(value) if "." in value else int(value)


async def main() -> None:
    options = dict(_option(argument) for argument in sys.argv[1:])
    async with anyio.create_task_group() as group:
        port = await group.start(partial(serve_http, server, "127.0.0.1", 0, log_level="warning", **options))
        print(port, flush=True)


if __name__ == "__main__":
    anyio.run(main)
