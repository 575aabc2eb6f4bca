"""Where mcpdi answers differently from the SDK on purpose (closer to the spec), written against the SDK."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("Differences")


@mcp.tool()
def echo(text: str) -> str:
    return text


@mcp.prompt()
def greet(name: str) -> str:
    return f"Hello {name}"


@mcp.prompt()
def broken() -> str:
    raise ValueError("the prompt crashed")


@mcp.resource("diff://raw")
def raw() -> bytes:
    return b"\x00\x01"


@mcp.resource("diff://items/{item}")
def item(item: str) -> str:
    raise RuntimeError("disk on fire")


@mcp.resource("diff://fixed")
def fixed() -> str:
    raise RuntimeError("disk on fire")
