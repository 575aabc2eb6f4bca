"""The low-level `Server`: a registry of `async (ctx, params)` handlers, its identity and capabilities."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

import mcp_types as types
from pydantic import BaseModel

from mcpdi.lowlevel._context import LifespanT, ServerRequestContext
from mcpdi.lowlevel._handover import TransportName, build_app, serve
from mcpdi.lowlevel._initialization import InitializationOptions, initialization_options
from mcpdi.lowlevel._runner import Runner
from mcpdi.lowlevel._serving import ServingOptions
from mcpdi.lowlevel._session_manager import NOT_BUILT, SessionManager

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpdi.lowlevel._param_headers import HeaderParam

__all__ = ("HandlerEntry", "Server")

Handler: TypeAlias = Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]
"""A registered request handler, erased: `(ctx, params) -> result`."""


@dataclass(frozen=True, slots=True)
class HandlerEntry:
    """A handler and the params model its requests are validated against."""

    params_type: type[BaseModel]
    handler: Handler
    # What the runner calls instead: the same answers, but a result may come as the dict the
    # runner would dump its model to, so the model is never built (`Server.answer_in_wire_form`).
    wire_handler: Handler | None = None


@asynccontextmanager
async def _no_lifespan(server: Server[Any]) -> AsyncGenerator[dict[str, Any]]:
    yield {}


async def _answer_ping(
    ctx: ServerRequestContext[Any], params: types.RequestParams | None
) -> types.EmptyResult:
    return types.EmptyResult()


class Server(Generic[LifespanT]):
    """A hand-written MCP server: one async handler per protocol method.

    Each handler is `async (ctx: ServerRequestContext, params) -> result` with `mcp_types`
    params and results; the server advertises a capability exactly when its handlers are
    set. It serves both protocol eras (the `initialize` handshake up to 2025-11-25, and
    2026-07-28 with its per-request envelope and `server/discover`); `ping`, `initialize`,
    `server/discover` and `logging/setLevel` are answered built in.

    Client notifications other than `notifications/cancelled` and `notifications/initialized`
    reach a handler registered for them (`on_progress=`, `on_roots_list_changed=`,
    `add_notification_handler`): `async (ctx, params) -> None`, awaited before the next
    message of the connection is read, so keep it short.

    `Mcp-Param-*` headers are checked against a tool's `inputSchema`: `get_tool_input_schema`
    answers it from what the server already has (else `on_list_tools` runs per call), and
    `get_tool_header_params` gives the header rules read once at registration (`MCPServer`).
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "",
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[types.Icon] | None = None,
        lifespan: Callable[[Server[LifespanT]], AbstractAsyncContextManager[LifespanT]] = _no_lifespan,
        get_tool_input_schema: Callable[[str], Mapping[str, Any] | None] | None = None,
        get_tool_header_params: Callable[[str], Sequence[HeaderParam] | None] | None = None,
        on_list_tools: Callable[
            [ServerRequestContext[LifespanT], types.PaginatedRequestParams | None],
            Awaitable[types.ListToolsResult],
        ]
        | None = None,
        on_call_tool: Callable[
            [ServerRequestContext[LifespanT], types.CallToolRequestParams],
            Awaitable[types.CallToolResult | types.InputRequiredResult],
        ]
        | None = None,
        on_list_resources: Callable[
            [ServerRequestContext[LifespanT], types.PaginatedRequestParams | None],
            Awaitable[types.ListResourcesResult],
        ]
        | None = None,
        on_list_resource_templates: Callable[
            [ServerRequestContext[LifespanT], types.PaginatedRequestParams | None],
            Awaitable[types.ListResourceTemplatesResult],
        ]
        | None = None,
        on_read_resource: Callable[
            [ServerRequestContext[LifespanT], types.ReadResourceRequestParams],
            Awaitable[types.ReadResourceResult | types.InputRequiredResult],
        ]
        | None = None,
        on_list_prompts: Callable[
            [ServerRequestContext[LifespanT], types.PaginatedRequestParams | None],
            Awaitable[types.ListPromptsResult],
        ]
        | None = None,
        on_get_prompt: Callable[
            [ServerRequestContext[LifespanT], types.GetPromptRequestParams],
            Awaitable[types.GetPromptResult | types.InputRequiredResult],
        ]
        | None = None,
        on_completion: Callable[
            [ServerRequestContext[LifespanT], types.CompleteRequestParams],
            Awaitable[types.CompleteResult],
        ]
        | None = None,
        on_set_logging_level: Callable[
            [ServerRequestContext[LifespanT], types.SetLevelRequestParams],
            Awaitable[types.EmptyResult | None],
        ]
        | None = None,
        on_ping: Callable[
            [ServerRequestContext[LifespanT], types.RequestParams | None],
            Awaitable[types.EmptyResult],
        ] = _answer_ping,
        on_subscribe_resource: Callable[
            [ServerRequestContext[LifespanT], types.SubscribeRequestParams],
            Awaitable[types.EmptyResult | None],
        ]
        | None = None,
        on_unsubscribe_resource: Callable[
            [ServerRequestContext[LifespanT], types.UnsubscribeRequestParams],
            Awaitable[types.EmptyResult | None],
        ]
        | None = None,
        on_subscriptions_listen: Callable[
            [ServerRequestContext[LifespanT], types.SubscriptionsListenRequestParams],
            Awaitable[types.SubscriptionsListenResult],
        ]
        | None = None,
        on_progress: Callable[
            [ServerRequestContext[LifespanT], types.ProgressNotificationParams],
            Awaitable[None],
        ]
        | None = None,
        on_roots_list_changed: Callable[
            [ServerRequestContext[LifespanT], types.NotificationParams],
            Awaitable[None],
        ]
        | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.lifespan = lifespan
        self.serving_options = ServingOptions()
        """Bearer auth, HTTP routes and debug, which every transport serving this server honours."""
        self.get_tool_input_schema = get_tool_input_schema
        self.get_tool_header_params = get_tool_header_params
        self.on_set_logging_level = on_set_logging_level
        self.extensions: dict[str, dict[str, Any]] = {}
        """Extension identifier -> settings, advertised under `capabilities.extensions` (SEP-2133)."""
        self._handlers: dict[str, HandlerEntry] = {}
        registrations: list[tuple[str, type[BaseModel], Handler | None]] = [
            ("ping", types.RequestParams, on_ping),
            ("tools/list", types.PaginatedRequestParams, on_list_tools),
            ("tools/call", types.CallToolRequestParams, on_call_tool),
            ("resources/list", types.PaginatedRequestParams, on_list_resources),
            ("resources/templates/list", types.PaginatedRequestParams, on_list_resource_templates),
            ("resources/read", types.ReadResourceRequestParams, on_read_resource),
            ("prompts/list", types.PaginatedRequestParams, on_list_prompts),
            ("prompts/get", types.GetPromptRequestParams, on_get_prompt),
            ("completion/complete", types.CompleteRequestParams, on_completion),
            ("resources/subscribe", types.SubscribeRequestParams, on_subscribe_resource),
            ("resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe_resource),
            ("subscriptions/listen", types.SubscriptionsListenRequestParams, on_subscriptions_listen),
        ]
        for method, params_type, handler in registrations:
            if handler is not None:
                self._handlers[method] = HandlerEntry(params_type, handler)
        self._notification_handlers: dict[str, HandlerEntry] = {}
        if on_progress is not None:
            self.add_notification_handler(
                "notifications/progress", types.ProgressNotificationParams, on_progress
            )
        if on_roots_list_changed is not None:
            self.add_notification_handler(
                "notifications/roots/list_changed", types.NotificationParams, on_roots_list_changed
            )
        self._server_info_wire: dict[str, Any] | None = None
        self._session_manager: SessionManager | None = None

    def add_request_handler(
        self,
        method: str,
        params_type: type[BaseModel],
        handler: Callable[[ServerRequestContext[LifespanT], Any], Awaitable[Any]],
    ) -> None:
        """Serve `method` (a spec method or your own) with `handler(ctx, params_type instance)`.

        Spec methods stay gated by protocol version (`ping` does not exist at 2026-07-28,
        whoever handles it); the built-in `initialize`, `server/discover` and
        `logging/setLevel` cannot be replaced.
        """
        if method in ("initialize", "server/discover", "logging/setLevel"):
            msg = (
                f"{method!r} is answered by the server itself and cannot be replaced; "
                "pass instructions=/on_set_logging_level= to Server(...) instead"
            )
            raise ValueError(msg)
        self._handlers[method] = HandlerEntry(params_type, handler)

    def add_notification_handler(
        self,
        method: str,
        params_type: type[BaseModel],
        handler: Callable[[ServerRequestContext[LifespanT], Any], Awaitable[None]],
    ) -> None:
        """Deliver the client's `method` notifications to `handler(ctx, params_type instance)`.

        A notification whose params do not fit `params_type`, and a handler that raises, are
        logged and dropped: a notification has no answer to carry the error. The runner keeps
        `notifications/cancelled` and `notifications/initialized` for itself.
        """
        if method in ("notifications/cancelled", "notifications/initialized"):
            msg = (
                f"{method!r} is taken by the server itself and cannot be handled; handle another notification"
            )
            raise ValueError(msg)
        self._notification_handlers[method] = HandlerEntry(params_type, handler)

    def notification_handler_for(self, method: str) -> HandlerEntry | None:
        """The registered handler of the client notification `method`, if any."""
        return self._notification_handlers.get(method)

    def answer_in_wire_form(self, method: str, wire_handler: Handler) -> None:
        """Let the runner answer `method` with `wire_handler`, which gives the same answers as its
        handler but may return a result as its wire form (the dict `model_dump(by_alias=True,
        mode="json", exclude_none=True)` of the model). Replacing the handler drops it."""
        entry = self._handlers[method]
        self._handlers[method] = HandlerEntry(entry.params_type, entry.handler, wire_handler)

    def end_listen_streams(self) -> None:
        """End every open `subscriptions/listen` stream gracefully (each sends its result): a
        transport calls it when shutdown begins, so listening clients are not kept to the grace.
        A handler wrapped (middleware) is unwrapped to find the listen handler's `close`."""
        entry = self._handlers.get("subscriptions/listen")
        close = getattr(inspect.unwrap(entry.handler), "close", None) if entry is not None else None
        if callable(close):
            close()

    def handler_for(self, method: str) -> HandlerEntry | None:
        """The registered handler of `method`, if any."""
        return self._handlers.get(method)

    @property
    def server_info(self) -> types.Implementation:
        """The server's identity as sent in `serverInfo`."""
        return types.Implementation(
            name=self.name,
            version=self.version,
            title=self.title,
            description=self.description,
            website_url=self.website_url,
            icons=self.icons,
        )

    @property
    def server_info_wire(self) -> dict[str, Any]:
        """`server_info` in wire form (computed once)."""
        if self._server_info_wire is None:
            self._server_info_wire = self.server_info.model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
        return self._server_info_wire

    def capabilities(self, era: Literal["legacy", "modern"] = "legacy") -> types.ServerCapabilities:
        """What this server serves, derived from its handlers, as the official SDK derives it.

        At 2026-07-28 change notifications travel only on `subscriptions/listen` streams, so
        the `listChanged` flags and `resources.subscribe` say whether that method is served.
        In the handshake era `resources.subscribe` says whether `resources/subscribe` is, and
        no list-changed notifications are promised. `logging` is advertised in the handshake
        era because `logging/setLevel` is always answered there (handlers can always `ctx.log`).
        """
        served = self._handlers
        if era == "modern":
            changes = subscribe = "subscriptions/listen" in served
        else:
            changes, subscribe = False, "resources/subscribe" in served
        return types.ServerCapabilities(
            tools=types.ToolsCapability(list_changed=changes) if "tools/list" in served else None,
            resources=types.ResourcesCapability(subscribe=subscribe, list_changed=changes)
            if "resources/list" in served or "resources/templates/list" in served
            else None,
            prompts=types.PromptsCapability(list_changed=changes) if "prompts/list" in served else None,
            completions=types.CompletionsCapability() if "completion/complete" in served else None,
            logging=types.LoggingCapability() if era == "legacy" else None,
            extensions=dict(self.extensions) or None,
        )

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[Runner[LifespanT]]:
        """Enter the lifespan once and yield the `Runner` that answers messages until exit."""
        async with self.lifespan(self) as lifespan_context:
            yield Runner(self, lifespan_context)

    def streamable_http_app(self, **options: Any) -> Starlette:
        """A Starlette app serving this server over Streamable HTTP (both eras); needs `mcpdi_transport`.

        `options` are `build_http_app`'s, or the official SDK's names for them.
        """
        return self.keep_session_manager(build_app(self, **options))

    def keep_session_manager(self, app: Starlette) -> Starlette:
        """Remember `app` as the one `session_manager` runs (and return it)."""
        self._session_manager = SessionManager(app)
        return app

    def create_initialization_options(
        self,
        notification_options: object | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The identity and handshake-era capabilities `initialize` announces (the SDK's record).

        `notification_options` is taken for the SDK's signature: mcpdi promises no
        handshake-era list-changed notifications. `extensions` replaces `self.extensions`.
        """
        return initialization_options(self, experimental_capabilities, extensions)

    @property
    def session_manager(self) -> SessionManager:
        """The sessions of the app `streamable_http_app()` built; `RuntimeError` before it was called."""
        if self._session_manager is None:
            raise RuntimeError(NOT_BUILT)
        return self._session_manager

    def run(
        self,
        transport: TransportName = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
    ) -> None:
        """Serve until stopped: on stdin/stdout, or over Streamable HTTP on `host:port`.

        Blocks; Ctrl-C on HTTP ends with uvicorn's clean shutdown, not a traceback.
        """
        serve(self, transport, host=host, port=port)
