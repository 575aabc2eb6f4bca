"""What the numbers were measured on: date, CPU, core count, Python and package versions."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from importlib import metadata

_PACKAGES = (
    "mcpdi",
    "mcp",
    "fastmcp",
    "fast-depends",
    "fastapi",
    "starlette",
    "pydantic",
    "anyio",
    "uvicorn",
    "uvloop",
    "httptools",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe() -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    versions = ", ".join(f"{name} {_version(name)}" for name in _PACKAGES)
    return "\n".join(
        [
            f"- date: {now}",
            f"- machine: {_cpu_model()}, nproc {len(os.sched_getaffinity(0))}, {platform.system()} {platform.release()}",
            f"- python: {platform.python_implementation()} {platform.python_version()}",
            f"- packages: {versions}",
            f"- load average at start (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        ]
    )


def load() -> str:
    """The date and the load average now, for a table measured at the end of a run."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{now}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
