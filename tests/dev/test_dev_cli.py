"""`mcpdi dev` on the command line: mistakes are one line on stderr, the page's URL is printed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from devprocess import ROOT, start_dev, stop
from inline_snapshot import snapshot

from mcpdi_transport._listen import bind_socket

pytestmark = pytest.mark.slow


def mcpdi_dev(*arguments: str, cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", "dev", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return done.returncode, done.stdout, done.stderr


def test_a_missing_file_is_one_line_and_nothing_is_served(tmp_path: Path) -> None:
    assert mcpdi_dev("missing.py", cwd=tmp_path) == snapshot((1, "", "mcpdi: no such file: missing.py\n"))


def test_a_file_that_does_not_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "typo.py").write_text("from mcpdi import MCPServer\nmcp = MCPServer(\n")
    assert mcpdi_dev("typo.py", cwd=tmp_path) == snapshot(
        (
            1,
            "",
            "mcpdi: cannot import typo.py (line 2: mcp = MCPServer(): SyntaxError: '(' was never closed\n",
        )
    )


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text("from mcpdi import MCPServer\nmcp = MCPServer('Shop')\n")
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        code, stdout, stderr = mcpdi_dev("shop.py", "--port", str(port), cwd=tmp_path)
    finally:
        taken.close()
    assert (code, stdout, stderr.replace(str(port), "PORT")) == snapshot(
        (1, "", "mcpdi: cannot listen on 127.0.0.1:PORT: address already in use\n")
    )


def test_the_page_url_and_the_watched_file_are_printed_and_the_named_object_is_served(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text(
        "from mcpdi import MCPServer\nfirst = MCPServer('First')\nsecond = MCPServer('Second')\n"
    )
    process, url = start_dev("two.py:second", cwd=tmp_path)
    import httpx2

    status = httpx2.get(f"{url}dev/status", timeout=10).json()
    rest = stop(process)
    assert status["server"] == "Second"
    assert rest.startswith("mcpdi dev: watching two.py for changes; Ctrl-C stops\n")


def test_ctrl_c_ends_the_dev_server_cleanly(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text("from mcpdi import MCPServer\nmcp = MCPServer('Shop')\n")
    process, _ = start_dev("shop.py", cwd=tmp_path)
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=20)
    rest = stop(process)
    assert (code, rest) == (0, "mcpdi dev: watching shop.py for changes; Ctrl-C stops\n")


def test_a_lifespan_that_fails_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "life.py").write_text(
        "from contextlib import asynccontextmanager\n"
        "from mcpdi import MCPServer\n\n"
        "@asynccontextmanager\n"
        "async def lifespan(server):\n"
        "    raise RuntimeError('the database is not reachable')\n"
        "    yield\n\n"
        "mcp = MCPServer('Life', lifespan=lifespan)\n"
    )
    assert mcpdi_dev("life.py", cwd=tmp_path) == snapshot(
        (
            1,
            "",
            "mcpdi: cannot start life.py: the server's lifespan failed: "
            "RuntimeError: the database is not reachable\n",
        )
    )
