"""Servers kept as files next to the client tests, loaded as the modules they are."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).parent / "servers"
INTEROP = Path(__file__).parent.parent / "interop" / "interop_servers.py"


def load_file(path: Path) -> Any:
    """The module in `path`, freshly executed (its server objects are new each time)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
