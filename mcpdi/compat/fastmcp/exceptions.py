"""`mcp.server.fastmcp.exceptions` of the SDK's 1.x line."""

from __future__ import annotations

from mcpdi import MCPServerError as FastMCPError
from mcpdi import ResourceError, ToolError

__all__ = ("FastMCPError", "ResourceError", "ToolError")
