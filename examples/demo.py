"""The bookshop, served on Streamable HTTP and driven by mcpdi's client in both protocol eras.

Run it with `make demo` (or `python examples/demo.py` inside the project's environment).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from mcpdi import types
from mcpdi_transport import Client

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the bookshop server exited early with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the bookshop server did not listen on port {port} within {seconds:.0f} s")


def text_of(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


def answering(confirm: bool | None):
    """An elicitation callback that accepts with `confirm`, or declines when `confirm` is None."""

    async def callback(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        print(f"      ? the server asks: {params.message}")
        if confirm is None:
            print("      ! the person declines")
            return types.ElicitResult(action="decline")
        print(f"      ! the person answers confirm={confirm}")
        return types.ElicitResult(action="accept", content={"confirm": confirm})

    return callback


async def drive(url: str, mode: str) -> None:
    print(f"\n=== protocol era: {mode} ===")
    async with Client(url, mode=mode) as client:
        assert client.server_info is not None
        print(f"connected to {client.server_info.name} at protocol {client.protocol_version}")
        listing = await client.list_tools()
        reserve = next(tool for tool in listing.tools if tool.name == "reserve_book")
        print("tools/list inputSchema of reserve_book:")
        print("   ", json.dumps(reserve.input_schema, sort_keys=True))
        result = await client.call_tool("reserve_book", {"title": "Dune"})
        print(f"reserve_book(Dune)          -> {text_of(result)}")
    for confirm, label in ((True, "accepted"), (None, "declined")):
        async with Client(url, mode=mode, elicitation_callback=answering(confirm)) as client:
            print(f"order_book(Neuromancer), {label}:")
            result = await client.call_tool("order_book", {"title": "Neuromancer"})
            marker = "isError " if result.is_error else ""
            print(f"    -> {marker}{text_of(result)}")


def main() -> None:
    port = free_port()
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(HERE / "bookshop.py")]
    command += ["--transport", "http", "--port", str(port)]
    print(f"starting the bookshop server: mcpdi run examples/bookshop.py --transport http --port {port}")
    with tempfile.TemporaryFile() as server_log:
        server = subprocess.Popen(command, stdout=server_log, stderr=subprocess.STDOUT)
        try:
            print("waiting for it to listen on 127.0.0.1 ...")
            wait_until_listening(port, server)
            url = f"http://127.0.0.1:{port}/mcp"
            print(f"bookshop serving Streamable HTTP at {url}")
            for mode in ("legacy", "2026-07-28"):
                anyio.run(drive, url, mode)
        except BaseException:
            server_log.seek(0)
            print("--- server log ---", server_log.read().decode(errors="replace"), sep="\n", file=sys.stderr)
            raise
        finally:
            print("\nstopping the bookshop server")
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
