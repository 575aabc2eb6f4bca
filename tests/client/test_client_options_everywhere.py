"""`Client(...)` options on every target: honoured, or refused where they cannot apply."""

from __future__ import annotations

import sys

import pytest

from mcpdi import Context, MCPServer
from mcpdi_transport import Client, StdioTarget

pytestmark = pytest.mark.anyio


def echo_headers() -> MCPServer:
    mcp = MCPServer("Headers")

    @mcp.tool()
    def header(ctx: Context, name: str) -> str:
        return str((ctx.headers or {}).get(name))

    return mcp


async def test_headers_reach_a_server_in_memory_as_an_http_server_would_see_them() -> None:
    async with Client(echo_headers(), headers={"X-Tenant": "acme"}) as client:
        result = await client.call_tool("header", {"name": "x-tenant"})
    assert result.structured_content == {"result": "acme"}


@pytest.mark.parametrize(
    "target", [StdioTarget(sys.executable, ("-c", "")), [sys.executable, "-c", ""]], ids=["target", "argv"]
)
def test_headers_for_a_stdio_server_are_refused_with_what_to_do_instead(target: object) -> None:
    with pytest.raises(
        ValueError, match=r"^Client\(headers=\.\.\.\) are sent with HTTP requests; a stdio"
    ) as refused:
        Client(target, headers={"authorization": "Bearer t"})  # pyright: ignore[reportArgumentType]
    assert str(refused.value).endswith(
        "(give it what it needs in its environment: StdioTarget(command, env={...}))"
    )
