"""Real Redis and nginx for the scale-out tests, on 127.0.0.1 and free ports, stopped after each use.

Both come from Debian's packages, which `make test` installs (`.ci/system-packages.sh`). A
missing binary fails the test with that command; it never skips.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest

INSTALL_HINT = "install the system packages the tests use: bash .ci/system-packages.sh"


def binary(name: str, *candidates: str) -> str:
    for candidate in (name, *candidates):
        found = shutil.which(candidate)
        if found is not None:
            return found
    pytest.fail(f"{name} is not installed; {INSTALL_HINT}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read().decode(errors="replace") if process.stdout else ""
            pytest.fail(f"{process.args!r} exited with {process.returncode} before listening:\n{output}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.fail(f"nothing listened on 127.0.0.1:{port} within {timeout} s ({process.args!r})")


def stop(process: subprocess.Popen[bytes], *, grace: float = 10.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    if process.stdout is not None:
        process.stdout.close()


@dataclass
class Redis:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def start_redis(port: int | None = None) -> Redis:
    port = free_port() if port is None else port
    argv = [
        binary("redis-server"),
        "--bind", "127.0.0.1",
        "--port", str(port),
        "--save", "",
        "--appendonly", "no",
        "--protected-mode", "yes",
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wait_for_port(port, process)
    return Redis(port, process)


@contextmanager
def redis_server() -> Iterator[Redis]:
    server = start_redis()
    try:
        yield server
    finally:
        stop(server.process)


@contextmanager
def python_server(
    script: Path, port: int, env: Mapping[str, str], args: Sequence[str] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """`python script port *args` with `env` added, listening on 127.0.0.1:`port`."""
    full_env = {**os.environ, **env}
    argv = [sys.executable, str(script), str(port), *args]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        stop(process)


@contextmanager
def nginx(config_body: str, workdir: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """nginx in the foreground with `config_body` as its `http {}` block, its files in `workdir`."""
    for folder in ("logs", "body", "proxy"):
        (workdir / folder).mkdir(parents=True, exist_ok=True)
    config = workdir / "nginx.conf"
    config.write_text(
        f"""
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/logs/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/proxy;
    uwsgi_temp_path {workdir}/proxy;
    scgi_temp_path {workdir}/proxy;
{config_body}
}}
"""
    )
    argv = [binary("nginx", "/usr/sbin/nginx"), "-p", str(workdir), "-c", str(config), "-g", "daemon off;"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        stop(process)


MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "scale-test", "version": "0"},
}


def call_tool(
    url: str, name: str, params: Mapping[str, Any], headers: Mapping[str, str] | None = None
) -> Any:
    """One 2026-07-28 `tools/call` on a new connection (so a gateway or the kernel may pick any process)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "_meta": MODERN_META, **params},
    }
    all_headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
        **(headers or {}),
    }
    response = httpx2.post(url, content=json.dumps(body), headers=all_headers, timeout=30)
    assert response.headers["content-type"].startswith("application/json"), response.text
    return response.json()


async def accept_ok(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """An elicitation callback saying yes to a `{ok: bool}` question."""
    return types.ElicitResult(action="accept", content={"ok": True})


def result_text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
