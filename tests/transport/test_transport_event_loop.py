"""`mcpdi run --transport http` is on uvloop and httptools when installed, else on asyncio and h11."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from transport_asgi import MODERN_META, modern_headers
from transport_cli_processes import StderrLines, start, stop

from mcpdi_transport._serve import event_loop_options

pytestmark = pytest.mark.slow

REPORTER = """
import asyncio
import sys

from mcpdi import MCPServer

mcp = MCPServer("reporter")


@mcp.tool()
async def serving_stack() -> str:
    loop = type(asyncio.get_running_loop())
    parser = "httptools" if "uvicorn.protocols.http.httptools_impl" in sys.modules else "h11"
    return f"{loop.__module__}.{loop.__qualname__} {parser}"
"""

# Runs the command as `python -m mcpdi_transport` does, with uvloop and httptools made
# unimportable first, as on a machine that installed mcpdi without the `fast` extra.
WITHOUT_FAST_EXTRA = (
    "import sys; sys.modules['uvloop'] = None; sys.modules['httptools'] = None; "
    "from mcpdi_transport._cli import main; main()"
)

needs_fast_extra = pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None or importlib.util.find_spec("httptools") is None,
    reason="uvloop and httptools come with the bench extra (uvicorn[standard])",
)


def serving_stack(*options: str, cwd: Path, launcher: tuple[str, ...] = ("-m", "mcpdi_transport")) -> str:
    """Serve the reporter with `mcpdi run` in a subprocess and ask it what it runs on."""
    (cwd / "reporter.py").write_text(REPORTER)
    process = start(
        "run", "reporter.py", "--transport", "http", "--port", "0", *options, cwd=cwd, launcher=launcher
    )
    lines = StderrLines(process)
    try:
        served = lines.until("Serving reporter on").splitlines()[-1]
        match = re.search(r"on (http://\S+)", served)
        assert match is not None, served
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "serving_stack", "arguments": {}, "_meta": MODERN_META},
        }
        answer = httpx2.post(
            match.group(1), json=body, headers=modern_headers("tools/call", "serving_stack"), timeout=10
        )
    finally:
        stop(process)
        lines.join()
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]["content"][0]["text"]


@needs_fast_extra
def test_run_over_http_serves_on_uvloop_and_httptools_when_they_are_installed(tmp_path: Path) -> None:
    assert serving_stack(cwd=tmp_path) == "uvloop.Loop httptools"


@needs_fast_extra
def test_loop_asyncio_and_http_h11_keep_the_standard_stack(tmp_path: Path) -> None:
    stack = serving_stack("--loop", "asyncio", "--http", "h11", cwd=tmp_path)
    assert stack == "asyncio.unix_events._UnixSelectorEventLoop h11"


def test_without_the_fast_extra_run_over_http_serves_on_asyncio_and_h11(tmp_path: Path) -> None:
    stack = serving_stack(cwd=tmp_path, launcher=("-c", WITHOUT_FAST_EXTRA))
    assert stack == "asyncio.unix_events._UnixSelectorEventLoop h11"


@pytest.mark.parametrize(
    ("option", "module"),
    [("--loop", "uvloop"), ("--http", "httptools")],
)
def test_asking_for_a_fast_part_that_is_not_installed_is_one_line(
    tmp_path: Path, option: str, module: str
) -> None:
    (tmp_path / "reporter.py").write_text(REPORTER)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_FAST_EXTRA,
            "run",
            "reporter.py",
            "--transport",
            "http",
            option,
            module,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stderr) == (
        1,
        f"mcpdi: {option} {module}: {module} is not installed; pip install 'mcpdi[fast]'\n",
    )


@needs_fast_extra
def test_event_loop_options_take_uvloop_unless_asyncio_is_asked_for() -> None:
    assert event_loop_options() == {"use_uvloop": True}
    assert event_loop_options("uvloop") == {"use_uvloop": True}
    assert event_loop_options("asyncio") == {}
