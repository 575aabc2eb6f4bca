"""`MCPServer`: decorators that compile tools, prompts and resources onto a low-level `Server`."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    Icon,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ToolAnnotations,
)
from typing_extensions import TypeVar as DefaultTypeVar

from mcpdi._context import Context
from mcpdi._explain import check_max_rounds, explain_tool
from mcpdi._lifespan import check_lifespan
from mcpdi._overrides import ResolverOverrides
from mcpdi._prompts import RegisteredPrompt, compile_prompt, get_prompt
from mcpdi._resource_security import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from mcpdi._resources import RegisteredResource, compile_resource, read_resource
from mcpdi._state import RequestStateSecurity
from mcpdi._tools import RegisteredTool, call_tool, compile_tool
from mcpdi.engine import AppScope, Explanation
from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError
from mcpdi.lowlevel._handover import TransportName
from mcpdi.lowlevel._param_headers import HeaderParam
from mcpdi.lowlevel._runner import Runner
from mcpdi.lowlevel._server import Server

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ("MCPServer",)

logger = logging.getLogger("mcpdi")

LifespanT = DefaultTypeVar("LifespanT", default=Any)
FnT = TypeVar("FnT", bound=Callable[..., Any])
EntryT = TypeVar("EntryT")


def _caller_namespace(depth: int) -> Mapping[str, Any]:
    """The locals of the frame that registers a function: where its local resolvers live."""
    return dict(sys._getframe(depth + 1).f_locals)  # pyright: ignore[reportPrivateUsage]


def _answers_script(
    tool: RegisteredTool | None,
    name: str,
    answers: Mapping[Any, Any] | Callable[[str, Mapping[str, Any] | None], Any] | None,
) -> Callable[[str | None, str, Mapping[str, Any] | None], Any]:
    """`call_tool`'s answers as an in-memory client script, looked up by key, resolver or method."""
    fns = {step.key: step.fn for step in tool.plan.steps} if tool is not None else {}

    def script(key: str | None, method: str, params: Mapping[str, Any] | None) -> Any:
        if answers is None:
            msg = f"tool {name!r} asked {method!r}; pass answers=... to call_tool"
            raise LookupError(msg)
        if callable(answers):
            return answers(method, params)
        for candidate in (key, fns.get(key or ""), method):
            if candidate is not None and candidate in answers:
                answer = answers[candidate]
                return answer(params) if callable(answer) else answer
        msg = f"no answer for {method!r} (key {key!r}) in answers={answers!r}"
        raise LookupError(msg)

    return script


def _registered(registry: Mapping[str, EntryT], kind: str, name: str) -> EntryT:
    """The tool or prompt registered as `name`; an unknown name is the client's -32602."""
    entry = registry.get(name)
    if entry is None:
        raise MCPError(INVALID_PARAMS, f"Unknown {kind}: {name}")
    return entry


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
    """

    def __init__(
        self,
        name: str | None = None,
        instructions: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        version: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        lifespan: Callable[[MCPServer[LifespanT]], AbstractAsyncContextManager[LifespanT]] | None = None,
        request_state: RequestStateSecurity | None = None,
        validate_resolvers: bool = False,
        request_state_security: RequestStateSecurity | None = None,
        resource_security: ResourceSecurity = DEFAULT_RESOURCE_SECURITY,
    ) -> None:
        if request_state is not None and request_state_security is not None:
            msg = (
                "MCPServer takes request_state= or request_state_security= (the official SDK's "
                "name for the same thing), not both"
            )
            raise TypeError(msg)
        check_lifespan(lifespan)
        self.name = name or "mcpdi"
        self.instructions = instructions
        chosen = request_state if request_state is not None else request_state_security
        self.request_state = chosen if chosen is not None else RequestStateSecurity.ephemeral()
        self.resource_security = resource_security
        self._lifespan = lifespan
        self._validate_resolvers = validate_resolvers
        self._tools: dict[str, RegisteredTool] = {}
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._resources: dict[str, RegisteredResource] = {}
        self._app_scope = AppScope()
        self._server: Server[LifespanT] = Server(
            self.name,
            version=version or "",
            title=title,
            description=description,
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            lifespan=self._enter_lifespan,  # pyright: ignore[reportArgumentType]
            get_tool_input_schema=self.tool_input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        self._server.get_tool_header_params = self.tool_header_params
        self._overrides = ResolverOverrides(
            self.name, (self._tools, self._prompts, self._resources), validate_resolvers=validate_resolvers
        )

    # -- what transports use ------------------------------------------------------------

    @property
    def server(self) -> Server[LifespanT]:
        """The low-level `Server` this object fills; transports serve it."""
        return self._server

    def running(self) -> AbstractAsyncContextManager[Runner[LifespanT]]:
        """Enter the lifespan once and yield the `Runner` that answers messages."""
        return self._server.running()

    def streamable_http_app(self, **options: Any) -> Starlette:
        """A Starlette app serving this server over Streamable HTTP (both protocol eras)."""
        return self._server.streamable_http_app(**options)

    def run(
        self,
        transport: TransportName = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
    ) -> None:
        """Serve until stopped, on stdin/stdout or over Streamable HTTP on `host:port`."""
        self._server.run(transport, host=host, port=port)

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
            await self._app_scope.aclose()

    # -- registration -------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        max_rounds: int | None = None,
    ) -> Callable[[FnT], FnT]:
        """Register a function as a tool: `@mcp.tool()` (note the parentheses).

        `max_rounds=n` refuses (with `InvalidSignature`) a resolver graph that could ask the
        client in more than `n` dependent rounds.
        """
        if callable(name):
            msg = "@mcp.tool is a decorator factory; write @mcp.tool() with parentheses"
            raise TypeError(msg)
        localns = _caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._add_tool(
                fn, name, title, description, annotations, icons, meta, structured_output, localns, max_rounds
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        *,
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
    ) -> None:
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
        check_max_rounds(tool, max_rounds, fn)
        if tool.name in self._tools:
            logger.warning("tool %r registered again; the new definition replaces the old one", tool.name)
        self._tools[tool.name] = tool

    def remove_tool(self, name: str) -> None:
        del self._tools[name]

    def prompt(
        self,
        name: str | None = None,
        *,
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
            prompt = compile_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                icons=icons,
                localns=localns,
                validate_resolvers=self._validate_resolvers,
            )
            self._prompts[prompt.name] = prompt
            return fn

        return register

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
            resource = compile_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                icons=icons,
                localns=localns,
                validate_resolvers=self._validate_resolvers,
                security=security if security is not None else self.resource_security,
            )
            self._resources[resource.uri] = resource
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
        tools = list(self._tools.values()) if name is None else [self._tools[name]]
        return tuple(explain_tool(tool) for tool in tools)

    def registered_tool(self, name: str) -> RegisteredTool:
        """A tool as registration compiled it (its plan, schema and output shape)."""
        return self._tools[name]

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        answers: Mapping[Any, Any] | Callable[[str, Mapping[str, Any] | None], Any] | None = None,
        protocol_version: str = "2026-07-28",
        capabilities: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> CallToolResult:
        """Call a tool in memory, as a client would, answering its questions from `answers`.

        `answers` maps a resolver function, an `inputRequests` key or a method name
        (`"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`) to the client's
        answer (a dict, a wire model, or a callable of the request params); or it is one
        callable `(method, params) -> answer`. A protocol error raises `MCPError`.

        The lifespan is entered on the first call and stays open for the next ones; leave it
        with `async with mcp: ...` around the calls, or `await mcp.aclose()`. The tool's
        handler is called directly (no JSON-RPC framing), so an exception a transport would
        answer with -32603 reaches the test as itself.
        """
        from mcpdi.testing._direct import call_tool_directly  # test-time only

        return await call_tool_directly(
            self,
            self._server,
            name,
            arguments or {},
            script=_answers_script(self._tools.get(name), name, answers),
            protocol_version=protocol_version,
            capabilities=capabilities,
            headers=headers,
        )

    async def __aenter__(self) -> MCPServer[LifespanT]:
        """Enter the lifespan for in-memory calls (`call_tool`) now; it is left on exit."""
        from mcpdi.testing._session import session_of

        await session_of(self).runner()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Leave the lifespan that in-memory calls entered (a no-op when none is open)."""
        from mcpdi.testing._session import session_of

        await session_of(self).aclose()

    def override(
        self, resolver: Callable[..., Any], replacement: Callable[..., Any]
    ) -> AbstractContextManager[None]:
        """Run `replacement` wherever `resolver` fills a parameter, until the `with` block ends.

        Every affected tool, prompt and resource is compiled anew on entering (a bad
        replacement raises `InvalidSignature` there) and restored on exit. See `mcpdi.testing`.
        """
        return self._overrides.override(resolver, replacement, _caller_namespace(1))

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
        tool = _registered(self._tools, "tool", params.name)
        return await call_tool(
            tool, params, self._context(ctx), security=self.request_state, audience=self.name
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
        fixed = [r.wire for r in self._resources.values() if isinstance(r.wire, Resource)]
        return ListResourcesResult(resources=fixed)

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        templates = [r.wire for r in self._resources.values() if isinstance(r.wire, ResourceTemplate)]
        return ListResourceTemplatesResult(resource_templates=templates)

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
