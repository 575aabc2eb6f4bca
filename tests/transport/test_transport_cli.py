"""The `mcpdi` command: each mistake is one line on stderr and exit status 1, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from inline_snapshot import snapshot

from mcpdi_transport._listen import bind_socket

pytestmark = pytest.mark.slow

SERVER_FILE = Path(__file__).parent / "transport_sample_server.py"


def mcpdi(*arguments: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.stdout == ""
    return done.returncode, done.stderr


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    assert mcpdi("run", "missing.py", cwd=tmp_path) == snapshot((1, "mcpdi: no such file: missing.py\n"))


def test_a_file_without_a_server_object_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("answer = 42\n")
    assert mcpdi("run", "plain.py", cwd=tmp_path) == snapshot(
        (
            1,
            "mcpdi: no MCPServer or Server object found in plain.py; name it mcp, server or app, "
            "or pass plain.py:NAME\n",
        )
    )


def test_a_named_object_that_is_missing_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("answer = 42\n")
    assert mcpdi("run", "plain.py:mcp", cwd=tmp_path) == snapshot(
        (1, "mcpdi: plain.py has no object named 'mcp'\n")
    )


def test_an_import_error_in_the_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("x = 1\nimport module_that_does_not_exist\n")
    assert mcpdi("run", "broken.py", cwd=tmp_path) == snapshot(
        (
            1,
            "mcpdi: cannot import broken.py (line 2): ModuleNotFoundError: "
            "No module named 'module_that_does_not_exist'\n",
        )
    )


def test_a_syntax_error_in_the_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "typo.py").write_text("def broken(:\n")
    assert mcpdi("run", "typo.py", cwd=tmp_path) == snapshot(
        (1, "mcpdi: cannot import typo.py (line 1): SyntaxError: invalid syntax\n")
    )


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        code, stderr = mcpdi(
            "run", str(SERVER_FILE), "--transport", "http", "--port", str(port), cwd=tmp_path
        )
    finally:
        taken.close()
    assert (code, stderr.replace(str(port), "PORT")) == snapshot(
        (1, "mcpdi: cannot listen on 127.0.0.1:PORT: address already in use\n")
    )


SHOP = """
from typing import Annotated

from mcpdi import MCPServer, Resolve

mcp = MCPServer("shop")


async def stock(title: str) -> int:
    return 3


def label(title: str, copies: Annotated[int, Resolve(stock)]) -> str:
    return f"{title}: {copies}"


@mcp.tool()
async def describe(title: str, text: Annotated[str, Resolve(label)]) -> str:
    return text
"""


def test_graph_prints_the_resolvers_of_a_tool_in_run_order(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", "graph", "shop.py", "describe"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == snapshot(
        """\
tool describe (shop.py:17)
arguments: title
1. stock (shop.py:9, async)
     title <- argument title
2. label (shop.py:13, sync)
     title <- argument title
     copies <- stock
describe
     title <- argument title
     text <- label
"""
    )


def test_graph_of_an_unknown_tool_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    assert mcpdi("graph", "shop.py", "nope", cwd=tmp_path) == snapshot(
        (1, "mcpdi: shop.py has no tool named 'nope'\n")
    )


@pytest.mark.parametrize("value", ["-1", "soon", "inf", "nan"])
def test_a_grace_or_timeout_that_is_no_number_of_seconds_is_refused_before_serving(
    tmp_path: Path, value: str
) -> None:
    code, stderr = mcpdi("run", str(SERVER_FILE), "--grace", value, cwd=tmp_path)
    assert code == 2
    assert f"argument --grace: expected a number of seconds (0 or more), got '{value}'" in stderr


def test_run_over_http_takes_the_allow_lists_and_the_connection_cap(tmp_path: Path) -> None:
    free = bind_socket("127.0.0.1", 0)
    port = free.getsockname()[1]
    free.close()
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER_FILE), "--transport", "http"]
    command += ["--port", str(port), "--allow-origin", "https://app.example", "--max-connections", "50"]
    command += ["--allow-host", "127.0.0.1:*"]
    server = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "cli-test", "version": "0"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    statuses: dict[str, int] = {}
    try:
        with httpx2.Client(timeout=5) as client:
            for _ in range(300):  # the server starts within 30 s
                try:
                    client.post(url, json=body, headers=headers)
                    break
                except httpx2.TransportError:
                    time.sleep(0.1)
            for origin in ("https://app.example", "http://localhost:3000", "https://evil.example"):
                statuses[origin] = client.post(
                    url, json=body, headers={**headers, "origin": origin}
                ).status_code
            statuses["localhost host"] = client.post(
                url, json=body, headers={**headers, "host": f"localhost:{port}"}
            ).status_code
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()
    assert statuses == {
        "https://app.example": 200,
        "http://localhost:3000": 403,  # an allow-list replaces the loopback defaults
        "https://evil.example": 403,
        "localhost host": 421,
    }
