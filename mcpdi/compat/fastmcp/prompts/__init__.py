"""`mcp.server.fastmcp.prompts` of the SDK's 1.x line (`from ... import base`)."""

from __future__ import annotations

from mcpdi.compat.fastmcp.prompts import base

__all__ = ("base",)
