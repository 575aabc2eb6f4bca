"""A server with a tool that announces a change, for a client listening when the server stops."""

from mcpdi import Context, MCPServer

mcp = MCPServer("Listened")


@mcp.tool()
async def change(ctx: Context) -> str:
    await ctx.notify_tools_changed()
    return "changed"
