"""mcpdi imports with the garbage collector paused, and leaves it as it found it, whatever the import did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Records, for each module imported after it, whether the collector was enabled at that moment.
_WATCH = """
import gc, sys

class CollectorWatch:
    collecting = set()

    def find_spec(self, name, path=None, target=None):
        if gc.isenabled():
            self.collecting.add(name)
        return None  # the usual finders import it

sys.meta_path.insert(0, CollectorWatch())
"""


def run_python(code: str) -> str:
    """What `code` printed, run in a fresh interpreter (the collector is one per process)."""
    done = subprocess.run(
        [sys.executable, "-c", _WATCH + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return done.stdout.strip()


def test_a_name_of_mcpdi_is_imported_with_the_collector_paused_and_it_runs_again_after() -> None:
    code = "from mcpdi import MCPServer\nprint('mcpdi._server' in CollectorWatch.collecting, gc.isenabled())"
    assert run_python(code) == "False True"


def test_a_name_whose_module_fails_to_import_leaves_the_collector_enabled() -> None:
    code = """
sys.modules["mcpdi._server"] = None  # its import now raises ImportError
import mcpdi
try:
    mcpdi.MCPServer
except ImportError:
    print("raised", gc.isenabled())
"""
    assert run_python(code) == "raised True"


def test_a_collector_disabled_before_stays_disabled() -> None:
    code = "gc.disable()\nfrom mcpdi import MCPServer\nprint(gc.isenabled())"
    assert run_python(code) == "False"


def test_a_name_of_mcpdi_lowlevel_is_imported_with_the_collector_paused_and_it_runs_again_after() -> None:
    code = (
        "import mcpdi.lowlevel\nmcpdi.lowlevel.drive_rounds\n"
        "print('mcpdi.lowlevel._client_rounds' in CollectorWatch.collecting, gc.isenabled())"
    )
    assert run_python(code) == "False True"


def test_loading_the_stdio_transport_leaves_the_collector_as_it_found_it() -> None:
    code = """
from mcpdi_transport._serve import _stdio_serving
_stdio_serving()
paused = {"mcpdi_transport._stdio", "anyio._backends._asyncio", "asyncio"} & CollectorWatch.collecting
print(sorted(paused), gc.isenabled())
gc.disable()
_stdio_serving()
print(gc.isenabled())
"""
    assert run_python(code) == "[] True\nFalse"
