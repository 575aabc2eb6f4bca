"""The low-level handlers an `MCPServer` installs: look the entry up, run it in a `Context`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)

from mcpdi._auth import INSUFFICIENT_SCOPE, get_access_token, missing_scopes
from mcpdi._context import Context
from mcpdi._middleware import ServerMiddleware, bypass_when_idle, wrap_handler
from mcpdi._tools._compiled import call_tool
from mcpdi.lowlevel._errors import MCPError

if TYPE_CHECKING:
    from mcpdi._registry import Registry
    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Handlers",)


class Handlers:
    """One `MCPServer`'s answers to the tool, prompt and resource methods, before middleware."""

    __slots__ = ("_registry", "_server")

    def __init__(self, server: MCPServer[Any], registry: Registry) -> None:
        self._server = server
        self._registry = registry

    def wrapped(self, chain: Sequence[ServerMiddleware]) -> dict[str, Any]:
        """The low-level `Server`'s `on_*` handlers: these, inside the middleware of `chain`
        (read per request) and, for calls while tracing, a span."""
        server = self._server
        return {
            "on_list_tools": wrap_handler("tools/list", self.list_tools, chain, server),
            "on_call_tool": wrap_handler("tools/call", self.call_tool, chain, server, spanned=True),
            "on_list_resources": wrap_handler("resources/list", self.list_resources, chain, server),
            "on_list_resource_templates": wrap_handler(
                "resources/templates/list", self.list_resource_templates, chain, server
            ),
            "on_read_resource": wrap_handler(
                "resources/read", self.read_resource, chain, server, spanned=True
            ),
            "on_list_prompts": wrap_handler("prompts/list", self.list_prompts, chain, server),
            "on_get_prompt": wrap_handler("prompts/get", self.get_prompt, chain, server, spanned=True),
        }

    def in_wire_form(
        self, wrapped: dict[str, Any], chain: Sequence[ServerMiddleware]
    ) -> Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]:
        """The runner's `tools/call` handler: the wire form while nothing wraps the call."""
        return bypass_when_idle(wrapped["on_call_tool"], self.call_tool_in_wire_form, chain)

    def listed_in_wire_form(
        self, wrapped: dict[str, Any], chain: Sequence[ServerMiddleware]
    ) -> Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]:
        """The runner's `tools/list` handler: the kept wire form while nothing wraps the list."""
        return bypass_when_idle(wrapped["on_list_tools"], self.list_tools_in_wire_form, chain)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self._registry.tool_list())

    async def list_tools_in_wire_form(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> dict[str, Any]:
        return self._registry.tool_list_in_wire_form()

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        result = await self.call_tool_in_wire_form(ctx, params, wire=False)
        return cast("CallToolResult | InputRequiredResult", result)

    async def call_tool_in_wire_form(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams, *, wire: bool = True
    ) -> CallToolResult | InputRequiredResult | dict[str, Any]:
        """`call_tool`; with `wire`, a plain result comes as its wire form (for the runner)."""
        tool = self._registry.tool(params.name)
        scopes = self._registry.tool_scopes.get(tool.name)
        if scopes:
            lacking = missing_scopes(get_access_token(), scopes)
            if lacking:
                msg = (
                    f"Tool {tool.name!r} needs the scopes {', '.join(lacking)}, which the access token lacks"
                )
                raise MCPError(INSUFFICIENT_SCOPE, msg, {"requiredScopes": list(scopes), "missing": lacking})
        server = self._server
        return await call_tool(
            tool, params, Context(ctx, server), security=server.request_state, audience=server.name, wire=wire
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        return ListPromptsResult(prompts=self._registry.prompt_list())

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: GetPromptRequestParams
    ) -> GetPromptResult | InputRequiredResult:
        prompt = self._registry.prompt(params.name)
        from mcpdi._prompts import get_prompt  # loaded already: registering the prompt did

        server = self._server
        return await get_prompt(
            prompt, params, Context(ctx, server), security=server.request_state, audience=server.name
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(resources=self._registry.resource_list())

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=self._registry.template_list())

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult | InputRequiredResult:
        from mcpdi._resources._compiled import read_resource  # loaded by the first resource registered

        server = self._server
        return await read_resource(
            self._registry.resources_in_order(),
            params,
            Context(ctx, server),
            security=server.request_state,
            audience=server.name,
        )
