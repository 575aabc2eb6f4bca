"""`mcpdi dev` as a real process: start it on a free port, read the URL it prints, stop it."""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"mcpdi dev: (http://127\.0\.0\.1:\d+/)")


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The next line the process prints, waiting at most `timeout` seconds."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            msg = f"mcpdi dev printed nothing within {timeout} s"
            raise TimeoutError(msg)
    return process.stdout.readline()


def start_dev(target: str, cwd: Path = ROOT) -> tuple[subprocess.Popen[str], str]:
    """`mcpdi dev TARGET --port 0` in a fresh process, and the page URL it printed."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpdi_transport", "dev", target, "--port", "0"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
    )
    line = read_line(process, 60)
    found = URL.search(line)
    if found is None:
        process.kill()
        rest = process.communicate(timeout=10)[0]
        msg = f"mcpdi dev did not print its URL: {line}{rest}"
        raise AssertionError(msg)
    return process, found.group(1)


def stop(process: subprocess.Popen[str]) -> str:
    """End the process; what it printed after its URL."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    assert process.stdout is not None
    with process.stdout:
        return process.stdout.read()
