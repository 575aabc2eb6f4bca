"""Middleware: functions around every request an `MCPServer` answers, outermost first.

Two shapes, one mechanism. A middleware is `async def mw(ctx, call_next)` (the reference
SDK's shape): it sees the method and its validated params, may rewrite them by calling
`call_next(replace(ctx, params=...))`, may look at the result or the exception, or may
answer itself (return a result, raise `MCPError`) without calling `call_next`. A
`Middleware` subclass (fastmcp's shape) overrides `on_request` and per-method hooks
such as `on_call_tool`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from mcp_types import CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams

from mcpdi._telemetry import traced, tracing

if TYPE_CHECKING:
    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = (
    "CallNext",
    "Middleware",
    "MiddlewareContext",
    "ServerMiddleware",
    "bypass_when_idle",
    "run_chain",
    "wrap_handler",
)

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True, slots=True)
class MiddlewareContext:
    """One request as middleware sees it; `dataclasses.replace` it to change what the handler gets."""

    method: str
    params: Any  # the validated params model (`CallToolRequestParams`, ...), or None
    request_context: ServerRequestContext[Any]
    server: MCPServer[Any]

    @property
    def tool(self) -> str | None:
        """The tool's name, for `tools/call`."""
        return self.params.name if isinstance(self.params, CallToolRequestParams) else None

    @property
    def prompt(self) -> str | None:
        """The prompt's name, for `prompts/get`."""
        return self.params.name if isinstance(self.params, GetPromptRequestParams) else None

    @property
    def uri(self) -> str | None:
        """The resource's URI, for `resources/read`."""
        return str(self.params.uri) if isinstance(self.params, ReadResourceRequestParams) else None

    @property
    def arguments(self) -> Mapping[str, Any] | None:
        """The client's arguments, for `tools/call` and `prompts/get`."""
        if isinstance(self.params, CallToolRequestParams | GetPromptRequestParams):
            return self.params.arguments
        return None

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request headers (lower-cased); None off HTTP."""
        return self.request_context.headers


CallNext = Callable[[MiddlewareContext], Awaitable[Any]]
ServerMiddleware = Callable[[MiddlewareContext, CallNext], Awaitable[Any]]


class Middleware:
    """Override the hooks you need; each gets the context and the next step, and returns the result.

    `on_request` wraps every request; inside it, the hook for the method runs
    (`on_call_tool`, `on_read_resource`, `on_get_prompt`, `on_list_tools`,
    `on_list_resources`, `on_list_resource_templates`, `on_list_prompts`, `on_complete`).
    """

    _HOOKS: ClassVar[Mapping[str, str]] = {
        "tools/call": "on_call_tool",
        "tools/list": "on_list_tools",
        "resources/read": "on_read_resource",
        "resources/list": "on_list_resources",
        "resources/templates/list": "on_list_resource_templates",
        "prompts/get": "on_get_prompt",
        "prompts/list": "on_list_prompts",
        "completion/complete": "on_complete",
    }

    async def __call__(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        hook_name = self._HOOKS.get(ctx.method)
        if hook_name is None:
            return await self.on_request(ctx, call_next)
        hook: Callable[[MiddlewareContext, CallNext], Awaitable[Any]] = getattr(self, hook_name)

        async def specific(inner: MiddlewareContext) -> Any:
            return await hook(inner, call_next)

        return await self.on_request(ctx, specific)

    async def on_request(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_call_tool(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_list_tools(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_read_resource(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_list_resources(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_list_resource_templates(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_get_prompt(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_list_prompts(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_complete(self, ctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(ctx)


async def run_chain(chain: Sequence[ServerMiddleware], ctx: MiddlewareContext, handler: CallNext) -> Any:
    """Run `handler` inside `chain`, the first middleware outermost."""

    def step(index: int) -> CallNext:
        if index == len(chain):
            return handler
        middleware = chain[index]
        following = step(index + 1)

        async def call(inner: MiddlewareContext) -> Any:
            return await middleware(inner, following)

        return call

    return await step(0)(ctx)


def wrap_handler(
    method: str,
    handler: Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]],
    chain: Sequence[ServerMiddleware],
    server: MCPServer[Any],
    *,
    spanned: bool = False,
) -> Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]]:
    """`handler` inside the middleware of `chain` and, with `spanned` while tracing, a span.

    `chain` is read on every request, so middleware added later counts. With neither, a
    request pays one list check (and one tracing check when `spanned`).
    """

    async def innermost(ctx: MiddlewareContext) -> ResultT:
        return await handler(ctx.request_context, ctx.params)

    async def through_chain(request: ServerRequestContext[Any], params: ParamsT) -> ResultT:
        if not chain:
            return await handler(request, params)
        return await run_chain(tuple(chain), MiddlewareContext(method, params, request, server), innermost)

    functools.update_wrapper(through_chain, handler, assigned=(), updated=())  # `inspect.unwrap` finds it
    if not spanned:
        return through_chain
    in_span = traced(method, through_chain)

    async def handle(request: ServerRequestContext[Any], params: ParamsT) -> ResultT:
        if tracing():
            return await in_span(request, params)
        if not chain:
            return await handler(request, params)
        return await run_chain(tuple(chain), MiddlewareContext(method, params, request, server), innermost)

    return functools.update_wrapper(handle, handler, assigned=(), updated=())


def bypass_when_idle(
    wrapped: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]],
    direct: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]],
    chain: Sequence[ServerMiddleware],
) -> Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]:
    """`direct` while `chain` is empty and tracing is off, else `wrapped` (`wrap_handler`'s, which
    middleware and spans see): the runner's wire-form handler of a spanned method."""

    async def handle(request: ServerRequestContext[Any], params: Any) -> Any:
        if chain or tracing():
            return await wrapped(request, params)
        return await direct(request, params)

    return handle
