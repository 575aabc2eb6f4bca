"""The argparse value types the commands share: ports, seconds, counts and sizes."""

from __future__ import annotations

import argparse
import re
from typing import Final

__all__ = ("LOG_LEVELS", "TARGET_HELP", "byte_count", "port", "positive", "seconds")

LOG_LEVELS: Final = ("critical", "error", "warning", "info", "debug")

TARGET_HELP: Final = "path/to/server.py or path/to/server.py:object"


def port(text: str) -> int:
    """A TCP port number (0 lets the system pick a free one)."""
    try:
        number = int(text)
    except ValueError:
        msg = f"not a port number: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not 0 <= number <= 65535:
        msg = f"{number} is not a TCP port; use 1-65535 (or 0 for any free port)"
        raise argparse.ArgumentTypeError(msg)
    return number


def seconds(text: str) -> float:
    """A number of seconds, 0 or more and finite (`nan`, `inf` and `1e999` are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        msg = f"expected a number of seconds (0 or more), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive(text: str) -> int:
    """A whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"expected a whole number of 1 or more, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


_BYTES: Final = re.compile(r"(\d+)\s*(KiB|MiB|GiB)?", re.IGNORECASE)
_UNITS: Final = {None: 1, "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def byte_count(text: str) -> int:
    """A number of bytes of 1 or more, in bytes or with a unit: `65536`, `64KiB`, `8MiB`, `1GiB`."""
    matched = _BYTES.fullmatch(text.strip())
    value = 0
    if matched is not None:
        unit = matched.group(2)
        value = int(matched.group(1)) * _UNITS[unit.lower() if unit else None]
    if value < 1:
        msg = f"expected a number of bytes of 1 or more (e.g. 65536, 64KiB, 8MiB), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value
