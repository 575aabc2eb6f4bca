"""A server that announces changes (served on stdio, HTTP and in memory to the client's listen())."""

from __future__ import annotations

from mcpdi import Context, MCPServer

server = MCPServer("notes")
notes = {"today": "empty"}


@server.resource("notes://today")
def today() -> str:
    return notes["today"]


@server.tool()
async def write_note(text: str, ctx: Context) -> str:
    notes["today"] = text
    await ctx.notify_resource_updated("notes://today")
    return "saved"


@server.tool()
async def retool(ctx: Context) -> str:
    await ctx.notify_tools_changed()
    await ctx.notify_prompts_changed()
    return "retooled"


if __name__ == "__main__":
    server.run()
