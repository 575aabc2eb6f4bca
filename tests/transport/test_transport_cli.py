"""The `mcpdi` command: each mistake is one line on stderr and exit status 1, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from inline_snapshot import snapshot
from transport_cli_processes import StderrLines, start, stop

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
            "mcpdi: cannot import broken.py (line 2: import module_that_does_not_exist): "
            "ModuleNotFoundError: No module named 'module_that_does_not_exist'\n",
        )
    )


def test_a_syntax_error_in_the_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "typo.py").write_text("def broken(:\n")
    assert mcpdi("run", "typo.py", cwd=tmp_path) == snapshot(
        (1, "mcpdi: cannot import typo.py (line 1: def broken(:): SyntaxError: invalid syntax\n")
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


def graph(*arguments: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", "graph", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_graph_prints_the_resolvers_of_a_tool_in_run_order(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    assert graph("shop.py", "describe", cwd=tmp_path) == snapshot("""\
tool describe (shop.py:17)
arguments: title
worst-case rounds: 0
client capabilities: -
1. stock (shop.py:9) async, scope round
     title <- argument title
2. label (shop.py:13) sync, scope round
     title <- argument title
     copies <- resolver stock
describe
     title <- argument title
     text <- resolver label
""")


def test_graph_draws_mermaid(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    assert graph("shop.py", "describe", "--format", "mermaid", cwd=tmp_path) == snapshot("""\
flowchart TD
    arg_title[/"title"/]
    r7afb6303f7["stock<br/>scope round"]
    r89e666d633["label<br/>scope round"]
    root(["describe<br/>worst-case rounds: 0"])
    arg_title --> r7afb6303f7
    arg_title --> r89e666d633
    r7afb6303f7 -->|copies| r89e666d633
    arg_title --> root
    r89e666d633 -->|text| root
""")


def test_graph_without_a_tool_explains_every_tool_as_json(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    body = json.loads(graph("shop.py", "--format", "json", cwd=tmp_path))
    assert body["server"] == "shop"
    assert [tool["name"] for tool in body["tools"]] == ["describe"]
    assert [r["name"] for r in body["tools"][0]["resolvers"]] == ["stock", "label"]
    assert body["tools"][0]["worstCaseRounds"] == 0


def test_graph_of_an_unknown_tool_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    assert mcpdi("graph", "shop.py", "nope", cwd=tmp_path) == snapshot(
        (1, "mcpdi: shop.py has no tool named 'nope'\n")
    )


def test_an_error_raised_deeper_names_the_failing_frame_and_its_code(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("def compute():\n    return 1 / 0\n\n\nvalue = compute()\n")
    (tmp_path / "app.py").write_text("from mcpdi import MCPServer\n\nimport helper\n")
    assert mcpdi("run", "app.py", cwd=tmp_path) == snapshot(
        (
            1,
            "mcpdi: cannot import app.py (line 3: import helper): ZeroDivisionError: division by zero\n"
            "  raised at helper.py:2 in compute: return 1 / 0\n",
        )
    )


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert re.fullmatch(r"mcpdi \d+\.\d+\.\d+\S*\n", done.stdout)


def test_a_command_other_than_version_never_looks_the_version_up(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from mcpdi_transport._cli import _parser  # pyright: ignore[reportPrivateUsage]

    def no_lookup(distribution: str) -> str:
        msg = f"the version of {distribution} was looked up (it scans every installed package)"
        raise AssertionError(msg)

    monkeypatch.setattr(importlib.metadata, "version", no_lookup)
    assert _parser().parse_args(["run", "server.py"]).command == "run"


@pytest.mark.parametrize(
    ("option", "value", "complaint"),
    [
        ("--port", "99999", "argument --port: 99999 is not a TCP port; use 1-65535 (or 0 for any free port)"),
        ("--port", "http", "argument --port: not a port number: 'http'"),
        ("--log-level", "loud", "argument --log-level: invalid choice: 'loud'"),
    ],
)
def test_an_impossible_option_is_an_error_not_a_default(
    tmp_path: Path, option: str, value: str, complaint: str
) -> None:
    code, stderr = mcpdi("run", str(SERVER_FILE), "--transport", "http", option, value, cwd=tmp_path)
    assert code == 2
    assert complaint in stderr.splitlines()[-1]


def test_run_over_http_prints_the_url_it_serves(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    process = start(
        "run", "shop.py", "--transport", "http", "--port", "0", "--log-level", "warning", cwd=tmp_path
    )
    lines = StderrLines(process)
    try:
        line = lines.until("Serving").splitlines()[-1]
    finally:
        stop(process)
        lines.join()
    assert re.fullmatch(r"Serving shop on http://127\.0\.0\.1:\d+/mcp", line), line


def test_reload_restarts_the_server_when_its_file_changes(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    process = start("run", "shop.py", "--transport", "http", "--port", "0", "--reload", cwd=tmp_path)
    lines = StderrLines(process)
    try:
        lines.until("Serving shop on")
        (tmp_path / "shop.py").write_text(SHOP.replace('MCPServer("shop")', 'MCPServer("shop2")'))
        after = lines.until("Serving shop2 on")
    finally:
        stop(process)
        lines.join()
    assert "Reloading: shop.py changed" in after


def test_reload_needs_http(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    assert mcpdi("run", "shop.py", "--reload", cwd=tmp_path) == snapshot(
        (1, "mcpdi: --reload needs --transport http: on stdio a restart would cut the client's stream\n")
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
