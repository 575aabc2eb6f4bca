"""1.x decorator handlers mapped onto mcpdi's low-level `Server` (`on_*` handlers of `(ctx, params)`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

import mcp_types as types

from mcpdi.compat.lowlevel._call_style import request_caller
from mcpdi.compat.lowlevel._request_context import RequestContext, request_context_of
from mcpdi.compat.lowlevel._results import (
    error_result,
    jsonschema_module,
    resource_contents,
    resource_uri,
    schema_problem,
    tool_result,
)
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import MCPError
from mcpdi.lowlevel._handover import serve_async
from mcpdi.lowlevel._initialization import InitializationOptions
from mcpdi.lowlevel._server import Server as _LowLevelServer

__all__ = ("NotificationOptions", "Server", "stdio_server")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
Handler = Callable[..., Awaitable[Any]]

_request: ContextVar[RequestContext] = ContextVar("mcpdi_compat_request")


@dataclass
class NotificationOptions:
    """Which list-changed notifications a 1.x server promises (its handlers send them)."""

    prompts_changed: bool = False
    resources_changed: bool = False
    tools_changed: bool = False


class _Stdio:
    """What `stdio_server()` yields: the process's stdin and stdout, served by `Server.run`."""

    def __init__(self, end: str) -> None:
        self.end = end

    def __repr__(self) -> str:
        return f"<mcpdi stdio {self.end}>"


@asynccontextmanager
async def stdio_server() -> AsyncGenerator[tuple[Any, Any]]:
    """The 1.x `async with stdio_server() as (read, write)`: pass both to `Server.run`."""
    yield _Stdio("stdin"), _Stdio("stdout")


class Server(_LowLevelServer[Any]):
    """The 1.x low-level `Server(name, version=None, instructions=None, lifespan=...)` and its decorators."""

    def __init__(
        self,
        name: str,
        version: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[types.Icon] | None = None,
        lifespan: Callable[[Any], Any] | None = None,
    ) -> None:
        given: dict[str, Any] = {} if lifespan is None else {"lifespan": lifespan}
        super().__init__(
            name,
            version=version or "",
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            **given,
        )
        self._tool_cache: dict[str, types.Tool] = {}
        self._list_tools: Callable[[Any], Awaitable[Any]] | None = None
        self._announced: InitializationOptions | None = None

    # -- the request in flight --------------------------------------------------------

    @property
    def request_context(self) -> RequestContext:
        """The request being handled (`request_id`, `meta`, `session`, `lifespan_context`, `request`).

        `LookupError` outside a request, as in 1.x.
        """
        return _request.get()

    async def _in_context(self, ctx: ServerRequestContext[Any], answer: Callable[[], Awaitable[Any]]) -> Any:
        token = _request.set(request_context_of(ctx))
        try:
            return await answer()
        finally:
            _request.reset(token)

    def _register(self, method: str, params_type: type[Any], answer: Callable[[Any], Awaitable[Any]]) -> None:
        async def handler(ctx: ServerRequestContext[Any], params: Any) -> Any:
            try:
                return await self._in_context(ctx, lambda: answer(params))
            except MCPError:
                raise
            except Exception as error:
                # 1.x answered a failing handler with its message as the JSON-RPC error, code 0
                raise MCPError(0, str(error)) from error

        self.add_request_handler(method, params_type, handler)

    def _decorator(
        self, method: str, params_type: type[Any], call: Callable[[Handler, Any], Awaitable[Any]]
    ) -> Callable[[F], F]:
        """A 1.x decorator: `call(func, params)` turns the request into the function's call and back."""

        def decorator(func: F) -> F:
            async def answer(params: Any) -> Any:
                return await call(func, params)

            self._register(method, params_type, answer)
            return func

        return decorator

    def _lister(
        self, method: str, request_type: type[Any], result_type: type[Any], field: str
    ) -> Callable[[F], F]:
        """A 1.x `list_*` decorator: the function returns the items (or the whole result); it is
        given the request when a parameter is typed as `request_type`, as 1.x decided."""

        def decorator(func: F) -> F:
            caller = request_caller(func, request_type)

            async def answer(params: types.PaginatedRequestParams | None) -> Any:
                result = await caller(request_type(params=params))
                if isinstance(result, result_type):
                    return result
                return result_type(**{field: list(result)})

            self._register(method, types.PaginatedRequestParams, answer)
            return func

        return decorator

    # -- tools ----------------------------------------------------------------------

    def list_tools(self) -> Callable[[F], F]:
        def decorator(func: F) -> F:
            caller = request_caller(func, types.ListToolsRequest)

            async def answer(params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
                return self._remember_tools(await caller(types.ListToolsRequest(params=params)))

            self._list_tools = caller
            self._register("tools/list", types.PaginatedRequestParams, answer)
            return func

        return decorator

    def _remember_tools(self, result: Any) -> types.ListToolsResult:
        """1.x's tool cache: a page (a `ListToolsResult`) adds its tools; a plain list replaces all."""
        if isinstance(result, types.ListToolsResult):
            self._tool_cache.update({tool.name: tool for tool in result.tools})
            return result
        tools = list(result)
        self._tool_cache = {tool.name: tool for tool in tools}
        return types.ListToolsResult(tools=tools)

    async def _cached_tool(self, name: str) -> types.Tool | None:
        """The listed tool `name`; on a miss the `list_tools` handler runs once more (1.x's refresh)."""
        if name not in self._tool_cache and self._list_tools is not None:
            self._remember_tools(await self._list_tools(types.ListToolsRequest()))
        return self._tool_cache.get(name)

    def call_tool(self, *, validate_input: bool = True) -> Callable[[F], F]:
        if validate_input:
            try:
                jsonschema_module()
            except ImportError as error:
                msg = f"{error}, or pass @server.call_tool(validate_input=False)"
                raise ImportError(msg) from None

        def decorator(func: F) -> F:
            async def answer(params: types.CallToolRequestParams) -> types.CallToolResult:
                try:  # 1.x: any failure on the way, the tool's or the listing's, is an error result
                    return await self._call(func, params, validate_input=validate_input)
                except Exception as error:
                    return error_result(str(error))

            self._register("tools/call", types.CallToolRequestParams, answer)
            return func

        return decorator

    async def _call(
        self, func: Handler, params: types.CallToolRequestParams, *, validate_input: bool
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        tool = await self._cached_tool(params.name)
        if validate_input and tool is not None:
            problem = schema_problem(arguments, tool.input_schema)
            if problem is not None:
                return error_result(f"Input validation error: {problem}")
        return tool_result(await func(params.name, arguments), tool)

    # -- resources ------------------------------------------------------------------

    def list_resources(self) -> Callable[[F], F]:
        return self._lister(
            "resources/list", types.ListResourcesRequest, types.ListResourcesResult, "resources"
        )

    def list_resource_templates(self) -> Callable[[F], F]:
        async def listing(func: Handler, params: Any) -> Any:
            result = await func()  # 1.x gave this handler nothing, not even for a cursor
            if isinstance(result, types.ListResourceTemplatesResult):
                return result
            return types.ListResourceTemplatesResult(resource_templates=list(result))

        return self._decorator("resources/templates/list", types.PaginatedRequestParams, listing)

    def read_resource(self) -> Callable[[F], F]:
        async def read(func: Handler, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
            uri = resource_uri(params.uri)
            return resource_contents(uri, await func(uri))

        return self._decorator("resources/read", types.ReadResourceRequestParams, read)

    def subscribe_resource(self) -> Callable[[F], F]:
        return self._on_uri("resources/subscribe", types.SubscribeRequestParams)

    def unsubscribe_resource(self) -> Callable[[F], F]:
        return self._on_uri("resources/unsubscribe", types.UnsubscribeRequestParams)

    def _on_uri(self, method: str, params_type: type[Any]) -> Callable[[F], F]:
        async def take(func: Handler, params: Any) -> types.EmptyResult:
            await func(resource_uri(params.uri))
            return types.EmptyResult()

        return self._decorator(method, params_type, take)

    # -- prompts, completion, logging -----------------------------------------------

    def list_prompts(self) -> Callable[[F], F]:
        return self._lister("prompts/list", types.ListPromptsRequest, types.ListPromptsResult, "prompts")

    def get_prompt(self) -> Callable[[F], F]:
        async def get(func: Handler, params: types.GetPromptRequestParams) -> types.GetPromptResult:
            return await func(params.name, params.arguments)

        return self._decorator("prompts/get", types.GetPromptRequestParams, get)

    def completion(self) -> Callable[[F], F]:
        async def complete(func: Handler, params: types.CompleteRequestParams) -> types.CompleteResult:
            completion = await func(params.ref, params.argument, params.context)
            if completion is None:
                completion = types.Completion(values=[], total=None, has_more=None)
            return types.CompleteResult(completion=completion)

        return self._decorator("completion/complete", types.CompleteRequestParams, complete)

    complete = completion

    def set_logging_level(self) -> Callable[[F], F]:
        """`func(level)` on `logging/setLevel`; mcpdi keeps the level too, for `send_log_message`."""

        def decorator(func: F) -> F:
            async def handler(ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> None:
                try:
                    await self._in_context(ctx, lambda: func(params.level))
                except MCPError:
                    raise
                except Exception as error:
                    raise MCPError(0, str(error)) from error

            self.on_set_logging_level = handler
            return func

        return decorator

    def progress_notification(self) -> Callable[[F], F]:
        """`func(progress_token, progress, total, message)` for each `notifications/progress` the
        client sends; a raising handler is logged, as 1.x logged it."""

        def decorator(func: F) -> F:
            async def handler(
                ctx: ServerRequestContext[Any], params: types.ProgressNotificationParams
            ) -> None:
                await self._in_context(
                    ctx, lambda: func(params.progress_token, params.progress, params.total, params.message)
                )

            self.add_notification_handler("notifications/progress", types.ProgressNotificationParams, handler)
            return func

        return decorator

    # -- the handshake ----------------------------------------------------------------

    def get_capabilities(
        self,
        notification_options: NotificationOptions | Any,
        experimental_capabilities: dict[str, dict[str, Any]],
    ) -> types.ServerCapabilities:
        """1.x's capabilities from the handlers: `listChanged` as `notification_options` promise,
        `logging` only with a `set_logging_level` handler, `experimental` as given."""
        served = super().capabilities("legacy")
        return served.model_copy(
            update={
                "tools": _changing(served.tools, notification_options.tools_changed),
                "resources": _changing(served.resources, notification_options.resources_changed),
                "prompts": _changing(served.prompts, notification_options.prompts_changed),
                "logging": types.LoggingCapability() if self.on_set_logging_level is not None else None,
                "experimental": experimental_capabilities or None,
            }
        )

    def create_initialization_options(
        self,
        notification_options: object | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """What `initialize` announces; pass it to `run` (1.x announced what it was given)."""
        options = super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )
        capabilities = self.get_capabilities(
            notification_options or NotificationOptions(), experimental_capabilities or {}
        )
        return _with_capabilities(
            options, capabilities.model_copy(update={"extensions": options.capabilities.extensions})
        )

    def capabilities(self, era: Literal["legacy", "modern"] = "legacy") -> types.ServerCapabilities:
        """The handshake announces what `run(read, write, options)` was given, as in 1.x."""
        if era == "legacy" and self._announced is not None:
            return self._announced.capabilities
        return super().capabilities(era)

    @property
    def server_info(self) -> types.Implementation:
        info = super().server_info
        announced = self._announced
        if announced is None:
            return info
        return info.model_copy(update={"name": announced.server_name, "version": announced.server_version})

    # -- serving ----------------------------------------------------------------------

    async def run(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        read_stream: Any,
        write_stream: Any,
        initialization_options: Any = None,
        raise_exceptions: bool = False,
        stateless: bool = False,
    ) -> None:
        """The 1.x `await server.run(read, write, server.create_initialization_options())`.

        `read_stream`/`write_stream` are what `stdio_server()` yields: the process's stdin/stdout.
        The handshake announces the name, version and capabilities of `initialization_options`.
        """
        if not (isinstance(read_stream, _Stdio) and isinstance(write_stream, _Stdio)):
            msg = (
                "Server.run(read, write, ...) takes the pair stdio_server() yields, "
                f"not {type(read_stream).__name__}/{type(write_stream).__name__}; "
                "for HTTP serve server.streamable_http_app()"
            )
            raise TypeError(msg)
        if isinstance(initialization_options, InitializationOptions):
            self._announced = initialization_options
        await serve_async(self, "stdio")


def _changing(capability: Any, changes: bool) -> Any:
    return None if capability is None else capability.model_copy(update={"list_changed": changes})


def _with_capabilities(
    options: InitializationOptions, capabilities: types.ServerCapabilities
) -> InitializationOptions:

    return replace(options, capabilities=capabilities)
