"""The SDK's smaller names a server reaches for (settings, sessions, errors), written against the SDK."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import ErrorData
from starlette.applications import Starlette
from starlette.routing import Mount

mcp = MCPServer(
    "Surface", debug=True, log_level="WARNING", dependencies=["httpx"], warn_on_duplicate_tools=False
)

USERS = {"ada": "Ada Lovelace"}


@mcp.tool()
async def shout(text: str, ctx: Context) -> str:
    await ctx.request_context.session.send_log_message("warning", f"shouting {text}", logger="surface")
    await ctx.close_sse_stream()
    return text.upper()


@mcp.tool()
def upper(text: str) -> str:
    return text.upper()


@mcp.tool()
def refuse() -> str:
    raise MCPError.from_error_data(ErrorData(code=-32099, message="not today", data={"why": "closed"}))


@mcp.resource("surface://users/{user}")
def user(user: str) -> str:
    if user not in USERS:
        raise ResourceNotFoundError(f"no user {user}")
    return USERS[user]


@mcp.resource("surface://vault")
def vault() -> str:
    raise ResourceError("the vault is sealed")


def error_shape() -> tuple[Any, ...]:
    error = MCPError(-32602, "bad input", {"field": "a"})
    copy = MCPError.from_error_data(error.error)
    return (error.error.code, error.error.message, error.error.data, str(error), copy.code, copy.data)


def settings() -> tuple[Any, ...]:
    s = mcp.settings
    return (
        s.debug,
        s.log_level,
        s.dependencies,
        s.warn_on_duplicate_tools,
        s.warn_on_duplicate_prompts,
        s.auth,
    )


def secured_app(**options: Any) -> Starlette:
    return mcp.streamable_http_app(
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*"],
            allowed_origins=["http://good.example"],
        ),
        **options,
    )


def mounted_app() -> Starlette:
    inner = mcp.streamable_http_app()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    return Starlette(routes=[Mount("/surface", app=inner)], lifespan=lifespan)
