"""Spellings of other MCP libraries mapped onto mcpdi, so their servers run with an import swap.

`mcpdi.compat.fastmcp` is `mcp.server.fastmcp` of the official SDK's 1.x line.
"""
