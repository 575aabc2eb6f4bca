"""The dependency direction is a test: the engine knows nothing of MCP, the MCP layer nothing of I/O."""

from __future__ import annotations

import subprocess
import sys

import pytest

HTTP_STACK = ("starlette", "uvicorn", "httpx2", "httpx")
MCP_MODULES = ("mcp_types", "pydantic", "mcp", "mcpdi._server", "mcpdi._lowlevel")


def modules_loaded_by(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


# `mcpdi/__init__.py` is the MCP front door; load the engine through a bare package so
# that only what the engine itself imports counts.
BARE_ENGINE_IMPORT = """
import importlib.util, sys, types
spec = importlib.util.find_spec("mcpdi")  # locates the package without running its __init__
package = types.ModuleType("mcpdi")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["mcpdi"] = package
import mcpdi.engine
"""


def test_importing_the_engine_loads_nothing_of_mcp_and_no_io_library() -> None:
    loaded = modules_loaded_by(BARE_ENGINE_IMPORT)
    leaked = sorted(m for m in (*HTTP_STACK, *MCP_MODULES, "anyio") if m in loaded)
    assert leaked == []


@pytest.mark.parametrize("statement", ["import mcpdi", "from mcpdi import MCPServer, Server"])
def test_importing_the_mcp_layer_loads_no_http_stack(statement: str) -> None:
    loaded = modules_loaded_by(statement)
    leaked = sorted(m for m in HTTP_STACK if m in loaded)
    assert leaked == []
