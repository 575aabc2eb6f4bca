"""`mcpdi_transport`'s curated front door: every name in `__all__` loads, and nothing else is promised."""

from __future__ import annotations

import subprocess
import sys

import mcpdi_transport

ALIASES = {"RequestContext": "ClientRequestContext"}  # the official SDK's name for the same class


def test_every_name_in_all_loads_from_its_home_module() -> None:
    for name in mcpdi_transport.__all__:
        assert getattr(mcpdi_transport, name).__name__ == ALIASES.get(name, name)


def test_dir_lists_exactly_the_public_names() -> None:
    assert dir(mcpdi_transport) == sorted(mcpdi_transport.__all__)


def test_importing_the_package_defers_the_http_stack_until_a_name_needs_it() -> None:
    code = (
        "import sys, mcpdi_transport\n"
        "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
