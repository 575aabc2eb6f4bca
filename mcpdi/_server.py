"""`MCPServer`: decorators that compile tools, prompts and resources onto a low-level `Server`."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from mcp_types import (
    Annotations,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    GetPromptRequestParams,
    GetPromptResult,
    Icon,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Prompt,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)
from typing_extensions import TypeVar as DefaultTypeVar

from mcpdi._auth import INSUFFICIENT_SCOPE, AuthSettings, TokenVerifier, get_access_token, missing_scopes
from mcpdi._completion import CompletionHandler, completion_handler
from mcpdi._context import Context
from mcpdi._errors import ToolError
from mcpdi._lifespan import check_lifespan
from mcpdi._middleware import MiddlewareContext, ServerMiddleware, run_chain
from mcpdi._overrides import ResolverOverrides
from mcpdi._prompts import RegisteredPrompt, compile_prompt, get_prompt
from mcpdi._resource_security import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from mcpdi._resources import RegisteredResource, compile_resource, read_resource
from mcpdi._sdk_server import SSE_NOT_SERVED, prompt_parts, refuse_unserved, tool_parts
from mcpdi._settings import Settings
from mcpdi._state._security import RequestStateSecurity
from mcpdi._telemetry import traced, tracing
from mcpdi._tool_names import warn_on_invalid_tool_name
from mcpdi._tools import RegisteredTool, call_tool, compile_tool
from mcpdi.engine import AppScope
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError
from mcpdi.lowlevel._handover import TransportName, serve_async
from mcpdi.lowlevel._param_headers import HeaderParam
from mcpdi.lowlevel._runner import Runner
from mcpdi.lowlevel._server import Server
from mcpdi.lowlevel._session_manager import SessionManager

# Imported where first used, so that a start serving `initialize` goes without them: explaining
# (`max_rounds`, `mcp.explain`), the in-memory calls and resource objects.
if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute

    from mcpdi._in_memory._calls import Answers, ReadResourceContents
    from mcpdi.engine import Explanation

__all__ = ("MCPServer",)

logger = logging.getLogger("mcpdi")

LifespanT = DefaultTypeVar("LifespanT", default=Any)
FnT = TypeVar("FnT", bound=Callable[..., Any])
EntryT = TypeVar("EntryT")
ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")
LogLevelName = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

DEFAULT_NAME = "mcp-server"


def _caller_namespace(depth: int) -> Mapping[str, Any]:
    """The locals of the frame that registers a function: where its local resolvers live.

    A function's locals are copied (they are a snapshot anyway); at module level they are the
    module's globals, kept as that dict rather than copied, since every registered entry keeps
    its namespace (for overrides) and a copy per tool would weigh as much as the module.
    """
    frame = sys._getframe(depth + 1)  # pyright: ignore[reportPrivateUsage]
    names = frame.f_locals
    return names if names is frame.f_globals else dict(names)


def _registered(registry: Mapping[str, EntryT], kind: str, name: str) -> EntryT:
    """The tool or prompt registered as `name`; an unknown name is the client's -32602."""
    entry = registry.get(name)
    if entry is None:
        raise MCPError(INVALID_PARAMS, f"Unknown {kind}: {name}")
    return entry


def _http_options(
    stateless_http: bool | None, json_response: bool | None, streamable_http_path: str | None
) -> dict[str, Any]:
    """The reference server's spelling of HTTP options, as `build_http_app` names them."""
    options: dict[str, Any] = {}
    if stateless_http is not None:
        options["stateless"] = stateless_http
    if json_response is not None:
        options["json_response"] = json_response
    if streamable_http_path is not None:
        options["path"] = streamable_http_path
    return options


class MCPServer(Generic[LifespanT]):
    """An MCP server whose tools, prompts and resources are plain decorated functions.

    Parameters are call arguments (in the published schema), `Context`, or
    `Annotated[T, Resolve(fn)]`: filled by your resolver, invisible to the model. Everything
    is compiled at registration, so a mistake raises `InvalidSignature` before any client
    connects. `request_state` (or `request_state_security`, as the official SDK spells it)
    seals the multi-round state of protocol 2026-07-28; give it shared keys
    (`RequestStateSecurity(keys=[...])`) when several processes serve one name.
    `validate_resolvers=True` checks every resolver's result against the annotation of the
    parameter it fills, as `Resolve(fn, validate=True)` does for one resolver.

    The positional parameters are the reference SDK's, in its order, so a server written
    for it constructs unchanged.
    """

    def __init__(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        version: str = "",
        *,
        lifespan: Callable[[MCPServer[LifespanT]], AbstractAsyncContextManager[LifespanT]] | None = None,
        request_state: RequestStateSecurity | None = None,
        validate_resolvers: bool = False,
        request_state_security: RequestStateSecurity | None = None,
        resource_security: ResourceSecurity = DEFAULT_RESOURCE_SECURITY,
        warn_on_duplicate_tools: bool = True,
        warn_on_duplicate_resources: bool = True,
        warn_on_duplicate_prompts: bool = True,
        debug: bool = False,
        log_level: LogLevelName | None = None,
        dependencies: list[str] | None = None,
        middleware: Sequence[ServerMiddleware] | None = None,
        token_verifier: TokenVerifier | None = None,
        auth: AuthSettings | None = None,
        auth_server_provider: object | None = None,
        tools: Sequence[Any] | None = None,
        resources: Sequence[Any] | None = None,
        extensions: Sequence[Any] | None = None,
        cache_hints: Mapping[str, Any] | None = None,
        subscriptions: object | None = None,
    ) -> None:
        refuse_unserved(
            auth_server_provider=auth_server_provider,
            extensions=extensions,
            cache_hints=cache_hints,
            subscriptions=subscriptions,
        )
        if request_state is not None and request_state_security is not None:
            msg = (
                "MCPServer takes request_state= or request_state_security= (the official SDK's "
                "name for the same thing), not both"
            )
            raise TypeError(msg)
        check_lifespan(lifespan)
        chosen = request_state if request_state is not None else request_state_security
        self.request_state = chosen if chosen is not None else RequestStateSecurity.ephemeral()
        self.resource_security = resource_security
        self.debug = debug
        self.dependencies = list(dependencies or ())
        if log_level is not None:
            logger.setLevel(log_level)
        self._warn_on_duplicate = {
            "tool": warn_on_duplicate_tools,
            "resource": warn_on_duplicate_resources,
            "prompt": warn_on_duplicate_prompts,
        }
        self._lifespan = lifespan
        self._validate_resolvers = validate_resolvers
        self._tools: dict[str, RegisteredTool] = {}
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._resources: dict[str, RegisteredResource] = {}
        self._app_scope = AppScope()
        self._custom_routes: list[BaseRoute] = []
        self._middleware: list[ServerMiddleware] = list(middleware or ())
        if (token_verifier is None) != (auth is None):
            msg = "bearer auth needs both token_verifier= and auth=AuthSettings(issuer_url=...)"
            raise ValueError(msg)
        self._token_verifier = token_verifier
        self._auth = auth
        self._tool_scopes: dict[str, tuple[str, ...]] = {}
        on_call_tool = self._through_middleware("tools/call", self._call_tool, spanned=True)
        self._server: Server[LifespanT] = Server(
            name or DEFAULT_NAME,
            version=version,
            title=title,
            description=description,
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            lifespan=self._enter_lifespan,  # pyright: ignore[reportArgumentType]
            get_tool_input_schema=self.tool_input_schema,
            on_list_tools=self._through_middleware("tools/list", self._list_tools),
            on_call_tool=on_call_tool,
            on_list_resources=self._through_middleware("resources/list", self._list_resources),
            on_list_resource_templates=self._through_middleware(
                "resources/templates/list", self._list_resource_templates
            ),
            on_read_resource=self._through_middleware("resources/read", self._read_resource, spanned=True),
            on_list_prompts=self._through_middleware("prompts/list", self._list_prompts),
            on_get_prompt=self._through_middleware("prompts/get", self._get_prompt, spanned=True),
        )
        self._server.get_tool_header_params = self.tool_header_params
        self._server.answer_in_wire_form(
            "tools/call", self._unless_wrapped(on_call_tool, self._call_tool_in_wire_form)
        )
        self._overrides = ResolverOverrides(
            self.name, (self._tools, self._prompts, self._resources), validate_resolvers=validate_resolvers
        )
        self.settings = Settings(
            debug,
            log_level or "INFO",
            warn_on_duplicate_resources,
            warn_on_duplicate_tools,
            warn_on_duplicate_prompts,
            self.dependencies,
            lifespan,
            auth,
        )
        for tool in tools or ():
            fn, keywords = tool_parts(tool)
            self.add_tool(fn, **keywords)
        for resource in resources or ():
            self.add_resource(resource)

    # -- identity (read from the low-level server, which announces it) ---------------------

    @property
    def name(self) -> str:
        return self._server.name

    @property
    def title(self) -> str | None:
        return self._server.title

    @property
    def description(self) -> str | None:
        return self._server.description

    @property
    def instructions(self) -> str | None:
        return self._server.instructions

    @property
    def website_url(self) -> str | None:
        return self._server.website_url

    @property
    def icons(self) -> list[Icon] | None:
        return self._server.icons

    @property
    def version(self) -> str:
        return self._server.version

    # -- middleware -----------------------------------------------------------------------

    @property
    def middleware(self) -> list[ServerMiddleware]:
        """The middleware around every request this server answers, outermost first (mutable)."""
        return self._middleware

    def add_middleware(self, middleware: ServerMiddleware) -> None:
        """Add `middleware` inside those already installed (the first added stays outermost)."""
        if not callable(middleware):
            msg = f"middleware is a callable (ctx, call_next) or a Middleware instance, not {middleware!r}"
            raise TypeError(msg)
        self._middleware.append(middleware)

    def _through_middleware(
        self,
        method: str,
        handler: Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]],
        *,
        spanned: bool = False,
    ) -> Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]]:
        """`handler` inside the installed middleware and, with `spanned` while tracing, a span.

        With neither, a request pays one list check and one tracing check.
        """
        chain = self._middleware

        async def innermost(ctx: MiddlewareContext) -> ResultT:
            return await handler(ctx.request_context, ctx.params)

        async def through_chain(request: ServerRequestContext[Any], params: ParamsT) -> ResultT:
            if not chain:
                return await handler(request, params)
            return await run_chain(tuple(chain), MiddlewareContext(method, params, request, self), innermost)

        in_span = traced(method, through_chain) if spanned else None

        async def handle(request: ServerRequestContext[Any], params: ParamsT) -> ResultT:
            if in_span is not None and tracing():
                return await in_span(request, params)
            if not chain:
                return await handler(request, params)
            return await run_chain(tuple(chain), MiddlewareContext(method, params, request, self), innermost)

        return handle

    def _unless_wrapped(
        self,
        wrapped: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]],
        direct: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]],
    ) -> Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]:
        """The runner's handler of a spanned method: `direct` while no middleware is installed and
        tracing is off, else `wrapped` (`_through_middleware`'s, which middleware and spans see)."""
        chain = self._middleware

        async def handle(request: ServerRequestContext[Any], params: Any) -> Any:
            if chain or tracing():
                return await wrapped(request, params)
            return await direct(request, params)

        return handle

    # -- what transports use ------------------------------------------------------------

    @property
    def server(self) -> Server[LifespanT]:
        """The low-level `Server` this object fills; transports serve it."""
        return self._server

    def running(self) -> AbstractAsyncContextManager[Runner[LifespanT]]:
        """Enter the lifespan once and yield the `Runner` that answers messages."""
        return self._server.running()

    @property
    def session_manager(self) -> SessionManager:
        """What an app mounting `streamable_http_app()` enters: `async with mcp.session_manager.run()`."""
        return self._server.session_manager

    async def run_stdio_async(self) -> None:
        """Serve on stdin/stdout in the running event loop, until stdin ends."""
        await serve_async(self, "stdio")

    async def run_streamable_http_async(
        self, *, host: str = "127.0.0.1", port: int = 8000, **options: Any
    ) -> None:
        """Serve over Streamable HTTP in the running event loop until cancelled (`run`'s options)."""
        await serve_async(
            self, "streamable-http", host=host, port=port, **self._app_options(None, None, None, options)
        )

    def streamable_http_app(
        self,
        *,
        stateless_http: bool | None = None,
        json_response: bool | None = None,
        streamable_http_path: str | None = None,
        **options: Any,
    ) -> Starlette:
        """A Starlette app serving this server over Streamable HTTP (both protocol eras).

        `stateless_http`, `json_response` and `streamable_http_path` are the reference
        SDK's names for `stateless`, `json_response` and `path` of `build_http_app`; the
        routes added with `custom_route` are served next to the MCP endpoint.
        """
        return self._server.streamable_http_app(
            **self._app_options(stateless_http, json_response, streamable_http_path, options)
        )

    def sse_app(self, **options: Any) -> Starlette:
        """The official SDK's legacy HTTP+SSE app, which mcpdi does not serve: `TypeError` naming the fix."""
        raise TypeError(SSE_NOT_SERVED)

    def _app_options(
        self,
        stateless_http: bool | None,
        json_response: bool | None,
        streamable_http_path: str | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        merged = {**_http_options(stateless_http, json_response, streamable_http_path), **options}
        merged.setdefault("debug", self.debug)
        merged["routes"] = (*self._custom_routes, *merged.get("routes", ()))
        if self._auth is not None:
            merged.setdefault("token_verifier", self._token_verifier)
            merged.setdefault("auth", self._auth)
        return merged

    def run(
        self,
        transport: TransportName = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        stateless_http: bool | None = None,
        json_response: bool | None = None,
        streamable_http_path: str | None = None,
        **options: Any,
    ) -> None:
        """Serve until stopped, on stdin/stdout or over Streamable HTTP on `host:port`.

        `"http"` and `"streamable-http"` name the same transport; the HTTP options are
        those of `streamable_http_app`.
        """
        if transport == "stdio":
            extra = _http_options(stateless_http, json_response, streamable_http_path)
            if extra or options:
                msg = f"HTTP options {sorted({*extra, *options})} make no sense with transport='stdio'"
                raise TypeError(msg)
            self._server.run(transport)
            return
        from mcpdi.lowlevel._handover import serve

        options = self._app_options(stateless_http, json_response, streamable_http_path, options)
        serve(self, transport, host=host, port=port, **options)

    def custom_route(
        self,
        path: str,
        methods: list[str],
        name: str | None = None,
        include_in_schema: bool = True,
    ) -> Callable[[Callable[[Any], Awaitable[Any]]], Callable[[Any], Awaitable[Any]]]:
        """Serve a plain HTTP endpoint next to MCP (`async def health(request) -> Response`).

        Only the HTTP transport serves it; it passes by no MCP machinery (no session, no
        `Context`), so check what it needs itself.
        """
        from starlette.routing import Route  # only HTTP serving needs Starlette

        def register(endpoint: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
            route = Route(
                path, endpoint=endpoint, methods=methods, name=name, include_in_schema=include_in_schema
            )
            self._custom_routes.append(route)
            return endpoint

        return register

    @property
    def app_scope(self) -> AppScope:
        """The values of app-scoped resolvers (`Resolve(fn, scope="app")`), shared by every
        call; their cleanup runs when the lifespan ends."""
        return self._app_scope

    @asynccontextmanager
    async def _enter_lifespan(self, server: Server[LifespanT]) -> AsyncGenerator[Any]:
        try:
            if self._lifespan is None:
                yield {}
                return
            async with self._lifespan(self) as value:
                yield value
        finally:
            try:
                await self._app_scope.aclose()
            finally:
                await self.request_state.aclose()  # a shared replay store's connections

    # -- registration -------------------------------------------------------------------

    def _keep_first(self, registry: dict[str, EntryT], kind: str, key: str, entry: EntryT) -> None:
        """Register `entry` unless `key` is taken: the first definition stays, as in the reference SDK."""
        if key in registry:
            if self._warn_on_duplicate[kind]:
                logger.warning("%s already exists: %s (the first definition is kept)", kind.capitalize(), key)
            return
        registry[key] = entry

    def tool(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        max_rounds: int | None = None,
        *,
        required_scopes: Sequence[str] = (),
    ) -> Callable[[FnT], FnT]:
        """Register a function as a tool: `@mcp.tool()` (note the parentheses).

        `max_rounds=n` refuses (with `InvalidSignature`) a resolver graph that could ask the
        client in more than `n` dependent rounds. `required_scopes`: with bearer auth, a
        caller whose token lacks one of them gets a -32003 error naming the missing scopes
        instead of the tool.
        """
        if callable(name):
            msg = "@mcp.tool is a decorator factory; write @mcp.tool() with parentheses"
            raise TypeError(msg)
        localns = _caller_namespace(1)

        def register(fn: FnT) -> FnT:
            tool = self._add_tool(
                fn, name, title, description, annotations, icons, meta, structured_output, localns, max_rounds
            )
            if required_scopes:
                self._tool_scopes[tool] = tuple(required_scopes)
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        max_rounds: int | None = None,
    ) -> None:
        """Register `fn` as a tool without the decorator."""
        localns = _caller_namespace(1)
        self._add_tool(
            fn, name, title, description, annotations, icons, meta, structured_output, localns, max_rounds
        )

    def _add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None,
        title: str | None,
        description: str | None,
        annotations: ToolAnnotations | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        structured_output: bool | None,
        localns: Mapping[str, Any],
        max_rounds: int | None = None,
    ) -> str:
        tool = compile_tool(
            fn,
            name=name,
            title=title,
            description=description,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
            localns=localns,
            validate_resolvers=self._validate_resolvers,
        )
        if max_rounds is not None:
            from mcpdi._explain import check_max_rounds

            check_max_rounds(tool, max_rounds, fn)
        warn_on_invalid_tool_name(tool.name)
        self._keep_first(self._tools, "tool", tool.name, tool)
        return tool.name

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; an unknown name raises `ToolError`."""
        if self._tools.pop(name, None) is None:
            msg = f"Unknown tool: {name}"
            raise ToolError(msg)

    def prompt(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> Callable[[FnT], FnT]:
        """Register a function as a prompt: `@mcp.prompt()`."""
        if callable(name):
            msg = "@mcp.prompt is a decorator factory; write @mcp.prompt() with parentheses"
            raise TypeError(msg)
        localns = _caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._add_prompt(fn, localns, name=name, title=title, description=description, icons=icons)
            return fn

        return register

    def add_prompt(
        self,
        prompt: Any,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> None:
        """Register a prompt without the decorator: a function, or the SDK's `Prompt` object."""
        fn, keywords = prompt_parts(
            prompt, {"name": name, "title": title, "description": description, "icons": icons}
        )
        self._add_prompt(fn, _caller_namespace(1), **keywords)

    def _add_prompt(self, fn: Callable[..., Any], localns: Mapping[str, Any], **keywords: Any) -> None:
        prompt = compile_prompt(fn, localns=localns, validate_resolvers=self._validate_resolvers, **keywords)
        self._keep_first(self._prompts, "prompt", prompt.name, prompt)

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; an unknown name raises `ValueError`."""
        if self._prompts.pop(name, None) is None:
            msg = f"Unknown prompt: {name}"
            raise ValueError(msg)

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        security: ResourceSecurity | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[FnT], FnT]:
        """Register a function as a resource (`"res://x"`) or a template (`"res://{x}"`).

        A template's variables pass `security` (by default the server's `resource_security`:
        no `..` segments, absolute paths or NUL bytes) before the function sees them.
        """
        if callable(uri):
            msg = "@mcp.resource takes the URI: write @mcp.resource('scheme://path')"
            raise TypeError(msg)
        localns = _caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._add_resource(
                fn, uri, name, title, description, mime_type, icons, annotations, meta, localns, security
            )
            return fn

        return register

    def add_resource(
        self,
        resource: Any,
        uri: str | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Register a resource without the decorator.

        `resource` is a function (then `uri` is required), or an object with `uri`, `name`
        and an async `read()` returning str or bytes (the reference SDK's resource classes
        qualify); its `title`, `description`, `mime_type`, `icons`, `annotations` and
        `meta` are published when present.
        """
        from mcpdi._resource_objects import is_resource_object, resource_from_object

        localns = _caller_namespace(1)
        if uri is None and is_resource_object(resource):
            overrides = {
                "name": name,
                "title": title,
                "description": description,
                "mime_type": mime_type,
                "icons": icons,
                "annotations": annotations,
                "meta": meta,
            }
            entry = resource_from_object(resource, overrides)
            fields = entry.fields
            self._add_resource(
                entry.read,
                entry.uri,
                fields["name"],
                fields["title"],
                fields["description"],
                fields["mime_type"],
                fields["icons"],
                fields["annotations"],
                fields["meta"],
                localns,
            )
            return
        if uri is None or not callable(resource):
            msg = (
                f"add_resource takes a function and its uri, or an object with .uri and an async .read(); "
                f"got {resource!r} with uri={uri!r}"
            )
            raise TypeError(msg)
        self._add_resource(
            resource, uri, name, title, description, mime_type, icons, annotations, meta, localns
        )

    def _add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        icons: list[Icon] | None,
        annotations: Annotations | None,
        meta: dict[str, Any] | None,
        localns: Mapping[str, Any],
        security: ResourceSecurity | None = None,
    ) -> None:
        resource = compile_resource(
            fn,
            uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            icons=icons,
            annotations=annotations,
            meta=meta,
            localns=localns,
            validate_resolvers=self._validate_resolvers,
            security=security if security is not None else self.resource_security,
        )
        self._keep_first(self._resources, "resource", resource.uri, resource)

    def completion(self) -> Callable[[CompletionHandler], CompletionHandler]:
        """Register the server's completion handler: `async def complete(ref, argument, context)`.

        It returns a `Completion` (or None for no suggestions) for a prompt argument or a
        resource template variable; registering one advertises the `completions` capability.
        """

        def register(fn: CompletionHandler) -> CompletionHandler:
            self._server.add_request_handler(
                "completion/complete", CompleteRequestParams, completion_handler(fn)
            )
            return fn

        return register

    # -- lookups --------------------------------------------------------------------------

    def tool_input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The published `inputSchema` of a tool (for `Mcp-Param-*` checks); None if unknown."""
        tool = self._tools.get(name)
        return tool.input_schema if tool is not None else None

    def tool_header_params(self, name: str) -> tuple[HeaderParam, ...] | None:
        """The arguments a tool mirrors as `Mcp-Param-*` headers (read at registration); None if unknown."""
        tool = self._tools.get(name)
        return tool.header_params if tool is not None else None

    def explain(self, name: str | None = None) -> tuple[Explanation, ...]:
        """The resolver graph of tool `name` (KeyError if unknown), or of every tool, explained:
        who reads what, who may ask what, the client capabilities and worst-case rounds."""
        from mcpdi._explain import explain_tool

        tools = list(self._tools.values()) if name is None else [self._tools[name]]
        return tuple(explain_tool(tool) for tool in tools)

    def registered_tool(self, name: str) -> RegisteredTool:
        """A tool as registration compiled it (its plan, schema and output shape)."""
        return self._tools[name]

    async def list_tools(self) -> list[Tool]:
        """The tools as `tools/list` publishes them."""
        return [tool.wire for tool in self._tools.values()]

    async def list_prompts(self) -> list[Prompt]:
        """The prompts as `prompts/list` publishes them."""
        return [prompt.wire for prompt in self._prompts.values()]

    async def list_resources(self) -> list[Resource]:
        """The resources with a fixed URI, as `resources/list` publishes them."""
        return [r.wire for r in self._resources.values() if isinstance(r.wire, Resource)]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """The resource templates, as `resources/templates/list` publishes them."""
        return [r.wire for r in self._resources.values() if isinstance(r.wire, ResourceTemplate)]

    # -- calls in memory, as a client would make them -------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
        *,
        answers: Answers | None = None,
        protocol_version: str = "2026-07-28",
        capabilities: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> CallToolResult:
        """Call a tool in memory, as a client would, answering its questions from `answers`.

        A failed call raises `ToolError` with the text the model would read (its subclass
        `UnexpectedToolError` when the tool crashed; `__cause__` is what it raised). An
        unknown tool, like any protocol error, raises `MCPError`.

        `answers` maps a resolver function, an `inputRequests` key or a method name
        (`"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`) to the client's
        answer (a dict, a wire model, or a callable of the request params); or it is one
        callable `(method, params) -> answer`. With a `context` (from inside another
        request) the tool runs in that request instead.

        The lifespan is entered on the first call and stays open for the next ones; leave it
        with `async with mcp: ...` around the calls, or `await mcp.aclose()`. The tool's
        handler is called directly (no JSON-RPC framing), so an exception a transport would
        answer with -32603 reaches the test as itself.
        """
        from mcpdi._in_memory._calls import call_tool

        return await call_tool(
            self,
            self._call_tool,
            name,
            arguments,
            context,
            answers=answers,
            protocol_version=protocol_version,
            capabilities=capabilities,
            headers=headers,
        )

    async def __aenter__(self) -> MCPServer[LifespanT]:
        """Enter the lifespan for in-memory calls (`call_tool`) now; it is left on exit."""
        from mcpdi._in_memory._lifespan import session_of

        await session_of(self).runner()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Leave the lifespan that in-memory calls entered (a no-op when none is open)."""
        from mcpdi._in_memory._lifespan import session_of

        await session_of(self).aclose()

    def override(
        self, resolver: Callable[..., Any], replacement: Callable[..., Any]
    ) -> AbstractContextManager[None]:
        """Run `replacement` wherever `resolver` fills a parameter, until the `with` block ends.

        Every affected tool, prompt and resource is compiled anew on entering (a bad
        replacement raises `InvalidSignature` there) and restored on exit. See `mcpdi.testing`.
        """
        return self._overrides.override(resolver, replacement, _caller_namespace(1))

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        answers: Answers | None = None,
        protocol_version: str = "2026-07-28",
    ) -> GetPromptResult:
        """Render a prompt in memory, as `prompts/get` would; errors raise `MCPError` (-32602)."""
        from mcpdi._in_memory._calls import get_prompt

        return await get_prompt(self, name, arguments, answers=answers, protocol_version=protocol_version)

    async def read_resource(
        self, uri: str, *, answers: Answers | None = None, protocol_version: str = "2026-07-28"
    ) -> Iterable[ReadResourceContents]:
        """Read a resource in memory, as `resources/read` would: its contents, blobs as bytes.

        An unknown URI or a `ResourceNotFoundError` raises `MCPError` -32602; a
        `ResourceError` or a crash raises `MCPError` -32603.
        """
        from mcpdi._in_memory._calls import read_resource

        return await read_resource(self, uri, answers=answers, protocol_version=protocol_version)

    async def read_resource_in(self, context: Context[Any, Any], uri: str) -> list[ReadResourceContents]:
        """Read a resource inside another request (`ctx.read_resource`), failing as `ResourceError`s.

        So that a tool reading a missing resource reports a tool error, not a protocol one.
        """
        from mcpdi._in_memory._calls import read_resource_in

        return await read_resource_in(self._read_resource, context, uri)

    # -- handlers -------------------------------------------------------------------------

    def _context(self, ctx: ServerRequestContext[Any]) -> Context[Any]:
        return Context(ctx, self)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[tool.wire for tool in self._tools.values()])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        result = await self._call_tool_in_wire_form(ctx, params, wire=False)
        return cast("CallToolResult | InputRequiredResult", result)

    async def _call_tool_in_wire_form(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams, *, wire: bool = True
    ) -> CallToolResult | InputRequiredResult | dict[str, Any]:
        """`_call_tool`; with `wire`, a plain result comes as its wire form (for the runner)."""
        tool = _registered(self._tools, "tool", params.name)
        scopes = self._tool_scopes.get(tool.name)
        if scopes:
            lacking = missing_scopes(get_access_token(), scopes)
            if lacking:
                msg = (
                    f"Tool {tool.name!r} needs the scopes {', '.join(lacking)}, which the access token lacks"
                )
                raise MCPError(INSUFFICIENT_SCOPE, msg, {"requiredScopes": list(scopes), "missing": lacking})
        return await call_tool(
            tool, params, self._context(ctx), security=self.request_state, audience=self.name, wire=wire
        )

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        return ListPromptsResult(prompts=[prompt.wire for prompt in self._prompts.values()])

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: GetPromptRequestParams
    ) -> GetPromptResult | InputRequiredResult:
        prompt = _registered(self._prompts, "prompt", params.name)
        return await get_prompt(
            prompt, params, self._context(ctx), security=self.request_state, audience=self.name
        )

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(resources=await self.list_resources())

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=await self.list_resource_templates())

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult | InputRequiredResult:
        # Fixed URIs first, so a template never shadows a resource registered by its exact URI.
        ordered = sorted(self._resources.values(), key=lambda r: r.pattern is not None)
        return await read_resource(
            tuple(ordered), params, self._context(ctx), security=self.request_state, audience=self.name
        )

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r}, tools={list(self._tools)!r})"
