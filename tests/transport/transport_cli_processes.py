"""Running the `mcpdi` command as a process whose stderr a test reads with bounded waits."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


class StderrLines:
    """The stderr lines of a running process, read by a thread so that waits can be bounded."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.lines: queue.Queue[str] = queue.Queue()
        self.stream = process.stderr
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        with self.stream:  # closed at the end of the output, when the process is gone
            for line in self.stream:
                self.lines.put(line)

    def join(self) -> None:
        self.reader.join(timeout=10)

    def until(self, wanted: str, seconds: float = 30) -> str:
        """The lines up to the first containing `wanted`; fails after `seconds`."""
        seen: list[str] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            seen.append(line)
            if wanted in line:
                return "".join(seen)
        msg = f"{wanted!r} not seen on stderr within {seconds} s; saw: {''.join(seen)!r}"
        raise AssertionError(msg)


def start(
    *arguments: str, cwd: Path, launcher: tuple[str, ...] = ("-m", "mcpdi_transport")
) -> subprocess.Popen[str]:
    """`python -m mcpdi_transport ARGUMENTS` (or `python LAUNCHER ARGUMENTS`), stderr piped."""
    return subprocess.Popen(
        [sys.executable, *launcher, *arguments],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # --reload runs a child: end the whole group
    )


def stop(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
