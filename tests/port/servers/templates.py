"""RFC 6570 resource templates as SDK code writes them: `{+path}`, `{?query}`, encoded values."""

from __future__ import annotations

from mcp import InvalidUriTemplate
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("Templates")


@mcp.resource("files://{+path}")
def read_file(path: str) -> str:
    return f"file {path}"


@mcp.resource("logs://{service}{?since,level}")
def logs(service: str, since: str = "1h", level: str = "info") -> str:
    return f"{service} since {since} at {level}"


@mcp.resource("echo://{text}")
def echo(text: str) -> str:
    return f"[{text}]"


@mcp.resource("docs://{section}/{page}.{ext}")
def doc(section: str, page: str, ext: str) -> str:
    return f"{section}|{page}|{ext}"


def refusal(template: str) -> tuple[str, str, int | None]:
    """What registering `template` raises: the class name, the SDK's sentence, the position."""
    server = MCPServer()
    try:
        server.resource(template)(lambda a="", b="": a + b)
    except InvalidUriTemplate as error:
        return type(error).__name__, str(error).split(". Resource URI template")[0], error.position
    return "accepted", "", None
