"""The official SDK 1.x's `mcp.server.fastmcp` on mcpdi: import from `mcpdi.compat.fastmcp` instead.

`FastMCP` takes the 1.x constructor (serving settings such as `host`, `port`,
`streamable_http_path` and `stateless_http` given up front, and kept, mutable, in
`mcp.settings`) and the 1.x `run(transport, mount_path=None)`. Tools, resources, prompts,
`Context`, lifespans and errors are mcpdi's own, which keep the 1.x names.
"""

from __future__ import annotations

from mcpdi import Audio, Context, Image
from mcpdi.compat.fastmcp._server import FastMCP, Settings

__all__ = ("Audio", "Context", "FastMCP", "Image", "Settings")
