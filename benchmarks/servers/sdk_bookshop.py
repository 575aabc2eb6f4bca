"""The bookshop of `examples/bookshop.py` for `mcp` 2.3.0: the same file with the SDK's imports.

The cold start benchmark serves it on stdio next to mcpdi's (`python benchmarks/servers/sdk_bookshop.py`).
Compiling the swapped source here costs about a millisecond, which the SDK's row carries.
"""

from __future__ import annotations

from pathlib import Path

BOOKSHOP = Path(__file__).resolve().parents[2] / "examples" / "bookshop.py"
MCPDI_IMPORTS = "from mcpdi import Elicit, ElicitationResult, MCPServer, Resolve\n"
SDK_IMPORTS = (
    "from mcp.server.mcpserver import MCPServer\n"
    "from mcp.server.mcpserver.resolve import Elicit, ElicitationResult, Resolve\n"
)


def sdk_source() -> str:
    source = BOOKSHOP.read_text(encoding="utf-8")
    if MCPDI_IMPORTS not in source:
        msg = f"{BOOKSHOP} no longer imports {MCPDI_IMPORTS.strip()!r}; update the twin's import swap"
        raise RuntimeError(msg)
    return source.replace(MCPDI_IMPORTS, SDK_IMPORTS)


if __name__ == "__main__":
    exec(compile(sdk_source(), str(BOOKSHOP), "exec"), {"__name__": "__main__"})
