"""`MCPServer`: decorators that compile tools, prompts and resources onto a low-level `Server`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mcp_types import (
    CallToolResult,
    GetPromptResult,
    Icon,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from typing_extensions import TypeVar as DefaultTypeVar

from mcpdi import _server_serving as serving
from mcpdi._auth import AccessToken, AuthSettings, TokenVerifier, authenticated
from mcpdi._context import Context
from mcpdi._decorators import Registering
from mcpdi._handlers import Handlers
from mcpdi._identity import Identity
from mcpdi._lifespan import check_lifespan, entered_lifespan
from mcpdi._middleware import ServerMiddleware, wrap_handler
from mcpdi._options import chosen_request_state
from mcpdi._overrides import ResolverOverrides
from mcpdi._registration import caller_namespace
from mcpdi._registry import Registry
from mcpdi._resources._security import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from mcpdi._sdk_server import add_sdk_objects, refuse_unserved
from mcpdi._settings import LogLevelName, Settings
from mcpdi._state._security import RequestStateSecurity
from mcpdi._subscribing import Subscriptions
from mcpdi._tools._compiled import RegisteredTool
from mcpdi.engine import AppScope
from mcpdi.lowlevel._handover import TransportName, serve_async
from mcpdi.lowlevel._param_headers import HeaderParam
from mcpdi.lowlevel._runner import Runner
from mcpdi.lowlevel._server import Server
from mcpdi.lowlevel._serving import CustomRoute, ServingOptions
from mcpdi.lowlevel._session_manager import SessionManager

# Imported where first used, so that a start serving `initialize` goes without them: explaining
# (`max_rounds`, `mcp.explain`), the in-memory calls and resource objects.
if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpdi._in_memory._calls import Answers, ReadResourceContents
    from mcpdi.engine import Explanation

__all__ = ("MCPServer",)

logger = logging.getLogger("mcpdi")

LifespanT = DefaultTypeVar("LifespanT", default=Any)
FnT = TypeVar("FnT", bound=Callable[..., Any])

DEFAULT_NAME = "mcp-server"


class MCPServer(Registering, Identity, Generic[LifespanT]):
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
        refuse_unserved(auth_server_provider=auth_server_provider, cache_hints=cache_hints)
        check_lifespan(lifespan)
        self.request_state = chosen_request_state(request_state, request_state_security, name=name)
        self.resource_security = resource_security
        self.debug = debug
        self.dependencies = list(dependencies or ())
        if log_level is not None:
            logger.setLevel(log_level)
        self._lifespan = lifespan
        self._registry = Registry(
            validate_resolvers=validate_resolvers,
            warn_on_duplicate={
                "tool": warn_on_duplicate_tools,
                "resource": warn_on_duplicate_resources,
                "prompt": warn_on_duplicate_prompts,
            },
        )
        self._app_scope = AppScope()
        self._custom_routes: list[CustomRoute] = []
        self._middleware: list[ServerMiddleware] = list(middleware or ())
        ServingOptions(token_verifier, auth)  # both or neither
        self._token_verifier = token_verifier
        self._auth = auth
        self._handlers = handlers = Handlers(self, self._registry)
        on = handlers.wrapped(self._middleware)
        self.subscriptions = Subscriptions(subscriptions, self._registry)
        """The bus `ctx.notify_*` publish on and the clients subscribed to what it carries."""
        self._server: Server[LifespanT] = Server(
            name or DEFAULT_NAME,
            version=version,
            title=title,
            description=description,
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            lifespan=self._enter_lifespan,  # pyright: ignore[reportArgumentType]
            get_tool_input_schema=self._registry.tool_input_schema,
            get_tool_header_params=self._registry.tool_header_params,
            # inside the middleware too, so auth, logging and telemetry see subscribers as well
            on_subscribe_resource=wrap_handler(
                "resources/subscribe", self.subscriptions.subscribe, self._middleware, self
            ),
            on_unsubscribe_resource=wrap_handler(
                "resources/unsubscribe", self.subscriptions.unsubscribe, self._middleware, self
            ),
            on_subscriptions_listen=None
            if self.subscriptions.listen is None
            else wrap_handler("subscriptions/listen", self.subscriptions.listen, self._middleware, self),
            **on,
        )
        self._server.serving_options = self.serving_options
        self._server.answer_in_wire_form("tools/call", handlers.in_wire_form(on, self._middleware))
        self._server.answer_in_wire_form("tools/list", handlers.listed_in_wire_form(on, self._middleware))
        registry = self._registry
        registries = (registry.tools, registry.prompts, registry.resources)
        self._overrides = ResolverOverrides(self.name, registries, validate_resolvers=validate_resolvers)
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
        add_sdk_objects(self, tools, resources)
        if extensions:  # a server without extensions never loads them
            from mcpdi._extensions import apply_extensions

            apply_extensions(self, extensions)

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
        self._server.serving_options = self.serving_options
        await serve_async(self, "streamable-http", host=host, port=port, **options)

    @property
    def serving_options(self) -> ServingOptions:
        """Bearer auth, custom routes and debug: every transport serving this server reads them."""
        return ServingOptions(self._token_verifier, self._auth, tuple(self._custom_routes), self.debug)

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
        server's own `serving_options` (bearer auth, `custom_route`s, debug) hold unless a
        keyword here overrides them, as with every other way of serving it.
        """
        return serving.streamable_http_app(self, stateless_http, json_response, streamable_http_path, options)

    def sse_app(
        self, *, sse_path: str = "/sse", message_path: str = "/messages/", **options: Any
    ) -> Starlette:
        """A Starlette app serving this server over the legacy HTTP+SSE transport (protocol 2024-11-05).

        For clients that still speak it: `GET sse_path` opens the event stream, messages
        are POSTed to `message_path?session_id=...`. The keywords are the reference SDK's
        (`max_request_body_size`, `transport_security`, `host`) or `build_http_app`'s for
        the same checks; the server's `serving_options` hold as for `streamable_http_app`.
        """
        return serving.sse_app(self, sse_path, message_path, options)

    async def run_sse_async(self, *, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve over the legacy HTTP+SSE transport in the running event loop until cancelled."""
        self._server.serving_options = self.serving_options
        await serve_async(self, "sse", host=host, port=port, **options)

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
        serving.run(self, transport, host, port, stateless_http, json_response, streamable_http_path, options)

    def custom_route(
        self,
        path: str,
        methods: list[str],
        name: str | None = None,
        include_in_schema: bool = True,
    ) -> Callable[[Callable[[Any], Awaitable[Any]]], Callable[[Any], Awaitable[Any]]]:
        """Serve a plain HTTP endpoint next to MCP (`async def health(request) -> Response`).

        Only the HTTP transport serves it; it passes by no MCP machinery (no session, no
        `Context`, no bearer auth), so check what it needs itself.
        """
        return serving.custom_route(self, self._custom_routes, path, methods, name, include_in_schema)

    @property
    def app_scope(self) -> AppScope:
        """The values of app-scoped resolvers (`Resolve(fn, scope="app")`), shared by every
        call; their cleanup runs when the lifespan ends."""
        return self._app_scope

    def _enter_lifespan(self, server: Server[LifespanT]) -> AbstractAsyncContextManager[Any]:
        delivering = self.subscriptions.delivering()
        return entered_lifespan(self, self._lifespan, self._app_scope, self.request_state, delivering)

    # -- lookups --------------------------------------------------------------------------

    def tool_input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The published `inputSchema` of a tool (for `Mcp-Param-*` checks); None if unknown."""
        return self._registry.tool_input_schema(name)

    def tool_header_params(self, name: str) -> tuple[HeaderParam, ...] | None:
        """The arguments a tool mirrors as `Mcp-Param-*` headers (read at registration); None if unknown."""
        return self._registry.tool_header_params(name)

    def explain(self, name: str | None = None) -> tuple[Explanation, ...]:
        """The resolver graph of tool `name` (KeyError if unknown), or of every tool, explained:
        who reads what, who may ask what, the client capabilities and worst-case rounds."""
        from mcpdi._explain import explain_tool

        tools = self._registry.tools
        return tuple(explain_tool(tool) for tool in (tools.values() if name is None else [tools[name]]))

    def registered_tool(self, name: str) -> RegisteredTool:
        """A tool as registration compiled it (its plan, schema and output shape)."""
        return self._registry.tools[name]

    async def list_tools(self) -> list[Tool]:
        """The tools as `tools/list` publishes them."""
        return self._registry.tool_list()

    async def list_prompts(self) -> list[Prompt]:
        """The prompts as `prompts/list` publishes them."""
        return self._registry.prompt_list()

    async def list_resources(self) -> list[Resource]:
        """The resources with a fixed URI, as `resources/list` publishes them."""
        return self._registry.resource_list()

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """The resource templates, as `resources/templates/list` publishes them."""
        return self._registry.template_list()

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
        principal: AccessToken | None = None,
        max_rounds: int = 10,
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

        `principal` is the verified access token the call runs with, as if a client had sent
        it over HTTP: `required_scopes` are checked against it and `requestState` is sealed
        to it (the server's own verifier is not asked). A tool still asking after `max_rounds`
        answered rounds raises `RoundLimitExceeded`, as `Client(max_rounds=...)` does.
        """
        from mcpdi._in_memory._calls import call_tool

        with authenticated(principal) if principal is not None else nullcontext():
            return await call_tool(
                self,
                self._handlers.call_tool,
                name,
                arguments,
                context,
                answers=answers,
                protocol_version=protocol_version,
                capabilities=capabilities,
                headers=headers,
                max_rounds=max_rounds,
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
        return self._overrides.override(resolver, replacement, caller_namespace(1))

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

        return await read_resource_in(self._handlers.read_resource, context, uri)

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r}, tools={list(self._registry.tools)!r})"
