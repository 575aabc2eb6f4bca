"""Bearer auth over stdio: the principal comes from `MCPDI_ACCESS_TOKEN`, checked by the server's verifier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "scale"))
from scale_services import MODERN_META  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SERVER = HERE / "compose_server.py"
REPORT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "report", "arguments": {}, "_meta": MODERN_META},
}


def _run_stdio(token: str | None, *command: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key != "MCPDI_ACCESS_TOKEN"}
    if token is not None:
        environ["MCPDI_ACCESS_TOKEN"] = token
    argv = command or ("-m", "mcpdi_transport", "run", str(SERVER))
    return subprocess.run(
        [sys.executable, *argv],
        input=json.dumps(REPORT) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
        cwd=HERE,
    )


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    return json.loads(line)["result"]["structuredContent"]


def test_a_stdio_server_runs_every_request_as_the_token_in_the_environment() -> None:
    done = _run_stdio("matrix-good-token")
    assert _report(done) == {
        "subject": "alice",
        "middleware": True,
        "span": "tools/call report",
        "lifespan": "entered",
    }
    assert "bearer auth guards HTTP requests only" not in done.stderr


def test_a_stdio_server_with_auth_and_no_token_says_so_once_at_start() -> None:
    done = _run_stdio(None)
    assert _report(done)["subject"] is None
    warning = (
        "WARNING mcpdi_transport: bearer auth guards HTTP requests only: over stdio every request runs "
        "without an access token (tools with required_scopes refuse); set MCPDI_ACCESS_TOKEN to a token "
        "for the server's verifier"
    )
    assert done.stderr.splitlines().count(warning) == 1, done.stderr


def test_a_token_the_verifier_refuses_stops_the_stdio_server_before_serving() -> None:
    done = _run_stdio("forged")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        "mcpdi: the server's token verifier refuses the token in MCPDI_ACCESS_TOKEN"
    )


def test_mcp_run_on_stdio_takes_the_token_from_the_environment_too() -> None:
    script = "import compose_server; compose_server.mcp.run('stdio')"
    assert _report(_run_stdio("matrix-good-token", "-c", script))["subject"] == "alice"


def test_redis_without_the_redis_package_prints_the_install_line(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['redis'] = None; from mcpdi_transport._cli import main; "
        f"main(['run', {str(SERVER)!r}, '--transport', 'http', '--redis', 'redis://127.0.0.1:1/0'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr == "mcpdi: --redis needs the redis package: pip install 'mcpdi[redis]'\n"
