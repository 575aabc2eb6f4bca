"""The official SDK 1.x's `mcp.server.lowlevel` and `mcp.server.stdio` on mcpdi.

Import `Server`, `NotificationOptions`, `InitializationOptions` and `stdio_server` from
`mcpdi.compat.lowlevel` instead: the 1.x decorators (`@server.list_tools()`,
`@server.call_tool()`, ...), `server.request_context` and
`await server.run(read, write, server.create_initialization_options())` serve on mcpdi.
"""

from __future__ import annotations

from mcpdi.compat.lowlevel._request_context import RequestContext
from mcpdi.compat.lowlevel._results import ReadResourceContents
from mcpdi.compat.lowlevel._server import NotificationOptions, Server, stdio_server
from mcpdi.lowlevel._initialization import InitializationOptions

__all__ = (
    "InitializationOptions",
    "NotificationOptions",
    "ReadResourceContents",
    "RequestContext",
    "Server",
    "stdio_server",
)
