"""A server that announces changes, in the reference SDK's spelling (ported by the harness)."""

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus

mcp = MCPServer("Notes", subscriptions=InMemorySubscriptionBus())
notes = {"today": "empty"}


@mcp.resource("notes://today")
def today() -> str:
    return notes["today"]


@mcp.resource("notes://day/{day}")
def day(day: str) -> str:
    return f"nothing on {day}"


@mcp.tool()
async def write_note(text: str, ctx: Context) -> str:
    notes["today"] = text
    await ctx.notify_resource_updated("notes://today")
    return "saved"


@mcp.tool()
async def retool(ctx: Context) -> str:
    await ctx.notify_tools_changed()
    return "retooled"


@mcp.tool()
async def poke(ctx: Context) -> str:
    await ctx.session.send_resource_updated("notes://today")
    await ctx.session.send_tool_list_changed()
    return "poked"
