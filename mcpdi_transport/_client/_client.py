"""`Client`: talk to an MCP server over HTTP, stdio or in memory, in either protocol era."""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from importlib import metadata
from types import TracebackType
from typing import Any, Literal, TypeVar, cast

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from mcpdi.lowlevel import (
    HEADER_MISMATCH,
    HeaderParam,
    InputRequired,
    MCPError,
    drive_rounds,
    find_invalid_x_mcp_header,
    mcp_param_headers,
    read_input_required,
    x_mcp_header_params,
)
from mcpdi_transport._client._callbacks import (
    Callbacks,
    ElicitationCallback,
    ListRootsCallback,
    LoggingCallback,
    MessageHandler,
    ProgressCallback,
    SamplingCallback,
)
from mcpdi_transport._client._channel import Channel, ChannelTarget, ConnectionLost
from mcpdi_transport._client._client_session import ClientSession, Mode
from mcpdi_transport._client._extensions import ClaimContext, fold_extensions
from mcpdi_transport._client._http import HttpChannel, open_http_channel
from mcpdi_transport._client._listen import Subscription, listen
from mcpdi_transport._client._memory import RunnableServer, open_memory_channel
from mcpdi_transport._client._sdk_options import completion_params, sdk_client_options
from mcpdi_transport._client._sdk_session import SessionView, round_params
from mcpdi_transport._client._stdio import StdioTarget, open_stdio_channel

__all__ = ("Client",)

logger = logging.getLogger("mcpdi_transport.client")

_ResultT = TypeVar("_ResultT", bound=BaseModel)

Resend = Callable[[dict[str, Any] | None, str | None], Awaitable[dict[str, Any]]]
"""Re-send the original request with (`inputResponses`, `requestState`) under a fresh id: its raw result."""
_RELIST_PAGES = 100


def _default_client_info() -> types.Implementation:
    try:
        version = metadata.version("mcpdi")
    except metadata.PackageNotFoundError:  # running from a source tree
        version = "0"
    return types.Implementation(name="mcpdi", version=version)


class Client:
    """An MCP client for one server, used as `async with Client(target) as client:`.

    `target` is a URL (Streamable HTTP), a command to spawn and talk to on stdio (a list of
    strings, a command-line string, or a `StdioTarget`), an `MCPServer`/`Server` object
    (served in memory through its runner, in the same process), or a `ChannelTarget` that
    opens a connection of its own (a test double or a custom transport).

    `mode` picks the protocol era: `"auto"` probes `server/discover` at 2026-07-28 and falls
    back to the `initialize` handshake when the server is not modern; `"legacy"` always
    uses the handshake; a modern version such as `"2026-07-28"` requires that version.

    Callbacks answer the server's questions, in the handshake era (server-to-client
    requests) and in the 2026-07-28 era (`inputRequests` of a multi-round call) alike. Their
    shapes follow the official SDK's `(context, params)` convention; the context is a
    `ClientRequestContext` (`request_id`, `era`, `protocol_version`, `meta`):

    - `elicitation_callback(context, params: ElicitRequestParams) -> ElicitResult | ErrorData`
    - `sampling_callback(context, params: CreateMessageRequestParams)
      -> CreateMessageResult | CreateMessageResultWithTools | ErrorData`
    - `list_roots_callback(context) -> ListRootsResult | ErrorData`
    - `logging_callback(params: LoggingMessageNotificationParams) -> None`
    - `message_handler(notification: ServerNotification) -> None` (every notification)

    The client declares exactly the capabilities it has callbacks for. An `ErrorData`
    answer is sent back as a JSON-RPC error (handshake era) or ends the call with
    `MCPError` (2026-07-28 era). A multi-round call gives up with `RoundLimitExceeded`
    after `max_rounds` rounds. `log_level` opts in to log messages per request in the
    2026-07-28 era. `headers` are sent with every HTTP request (e.g. authorization); a
    server object in memory reads them in `ctx.headers`; a stdio server reads none, so they
    are refused there. `raise_exceptions=True` makes a server object in memory fail a request
    whose handler crashed with `MCPError(-32603, str(exception))` raised from that exception
    (as the official SDK's in-memory client does); over HTTP and stdio the wire carries only
    the server's generic error, so it changes nothing there.

    Errors the server answers with are raised as `mcpdi.MCPError(code, message, data)`.
    """

    def __init__(
        self,
        target: str | Sequence[str] | StdioTarget | ChannelTarget | RunnableServer,
        *,
        mode: Mode = "auto",
        elicitation_callback: ElicitationCallback | None = None,
        sampling_callback: SamplingCallback | None = None,
        list_roots_callback: ListRootsCallback | None = None,
        logging_callback: LoggingCallback | None = None,
        message_handler: MessageHandler | None = None,
        max_rounds: int | None = None,
        headers: Mapping[str, str] | None = None,
        client_info: types.Implementation | None = None,
        log_level: types.LoggingLevel | None = None,
        discover_timeout: float = 10.0,
        read_timeout_seconds: float | None = None,
        sampling_capabilities: types.SamplingCapability | None = None,
        input_required_max_rounds: int | None = None,
        extensions: Sequence[Any] | None = None,
        raise_exceptions: bool = False,
        cache: object | None = None,
        prior_discover: object | None = None,
    ) -> None:
        max_rounds = sdk_client_options(max_rounds, input_required_max_rounds, cache, prior_discover)
        folded = fold_extensions(extensions)
        if mode not in ("auto", "legacy") and mode not in MODERN_PROTOCOL_VERSIONS:
            msg = (
                f"Client(mode={mode!r}) is not a mode; use 'auto', 'legacy' or one of "
                f"{list(MODERN_PROTOCOL_VERSIONS)} (handshake versions are negotiated by mode='legacy')"
            )
            raise ValueError(msg)
        if max_rounds < 1:
            msg = f"Client(max_rounds={max_rounds}) must allow at least one round"
            raise ValueError(msg)
        self._target = _classify_target(target)
        if headers and isinstance(self._target, StdioTarget):
            msg = (
                "Client(headers=...) are sent with HTTP requests; a stdio server reads no headers "
                "(give it what it needs in its environment: StdioTarget(command, env={...}))"
            )
            raise ValueError(msg)
        self._mode = mode
        self._headers = dict(headers or {})
        self._raise_exceptions = raise_exceptions
        self._max_rounds = max_rounds
        self._discover_timeout = discover_timeout
        callbacks = Callbacks(
            elicitation=elicitation_callback,
            sampling=sampling_callback,
            list_roots=list_roots_callback,
            logging=logging_callback,
            message_handler=message_handler,
            sampling_capabilities=sampling_capabilities,
        )
        self._session = ClientSession(callbacks, client_info or _default_client_info(), log_level, folded)
        self._session.read_timeout = read_timeout_seconds
        self._exit_stack: AsyncExitStack | None = None
        self._header_params: dict[str, tuple[HeaderParam, ...]] = {}

    # -- connecting -------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        if self._exit_stack is not None:
            msg = "This Client is already connected; create a new Client for a second connection"
            raise RuntimeError(msg)
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self._session.bound_notifications.running())
            channel = await stack.enter_async_context(self._open_channel())
            await self._session.connect(channel, self._mode, self._discover_timeout)
            self._exit_stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._exit_stack = self._exit_stack, None
        self._session.channel = None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    def _open_channel(self) -> AbstractAsyncContextManager[Channel]:
        target = self._target
        if isinstance(target, str):
            return open_http_channel(target, self._session, self._headers)
        if isinstance(target, StdioTarget):
            return open_stdio_channel(target, self._session)
        if isinstance(target, ChannelTarget):
            return target.open(self._session)
        return open_memory_channel(
            target, self._session, self._headers, raise_exceptions=self._raise_exceptions
        )

    @property
    def protocol_version(self) -> str:
        """The protocol version in use (negotiated by `initialize`, or the modern one adopted)."""
        return _connected(self._session.protocol_version)

    @property
    def era(self) -> Literal["unset", "legacy", "modern"]:
        """`"legacy"` (initialize handshake) or `"modern"` (2026-07-28 per-request envelope)."""
        return self._session.era

    @property
    def server_info(self) -> types.Implementation | None:
        """The server's name and version (optional in the 2026-07-28 era)."""
        return self._session.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities:
        """What the server said it can do."""
        return _connected(self._session.server_capabilities)

    @property
    def instructions(self) -> str | None:
        """The server's instructions text, if it gave any."""
        return self._session.instructions

    @property
    def _mirrors_headers(self) -> bool:
        channel: Channel | None = self._session.channel
        return self._session.era == "modern" and channel is not None and channel.is_http

    # -- tools ------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> types.ListToolsResult:
        """One page of the server's tools.

        Remembers each tool's latest `inputSchema` for `Mcp-Param-*` headers; on a
        2026-07-28 HTTP connection, tools whose `x-mcp-header` annotations are invalid
        are dropped from the result (with a warning), as the spec requires.
        """
        params = {"cursor": cursor} if cursor is not None else None
        result = _parse(types.ListToolsResult, await self._session.send("tools/list", params))
        if self._mirrors_headers:
            kept: list[types.Tool] = []
            for tool in result.tools:
                reason = find_invalid_x_mcp_header(tool.input_schema)
                if reason is not None:
                    logger.warning(
                        "dropping tool %r: invalid x-mcp-header annotation (%s)", tool.name, reason
                    )
                    self._header_params.pop(tool.name, None)
                    continue
                kept.append(tool)
            result.tools = kept
        if cursor is None and result.next_cursor is None:  # the whole catalogue: forget removed tools
            self._header_params.clear()
        for tool in result.tools:
            self._header_params[tool.name] = x_mcp_header_params(tool.input_schema)
        return result

    def _param_headers(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, str]:
        params = self._header_params.get(name)
        if not params or not self._mirrors_headers:
            return {}
        return mcp_param_headers(params, arguments)

    async def _relist_until(self, name: str) -> None:
        cursor: str | None = None
        for _ in range(_RELIST_PAGES):
            page = await self.list_tools(cursor)
            cursor = page.next_cursor
            if cursor is None or any(tool.name == name for tool in page.tools):
                return

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress_callback: ProgressCallback | None = None,
    ) -> types.CallToolResult:
        """Call a tool; answers any questions the server asks along the way.

        `progress_callback(progress, total, message)` receives the progress the server
        reports for this call. On a 2026-07-28 HTTP connection, a `-32020` header rejection
        (the tool was never listed, or its schema changed) makes the client re-list the
        tools and resend once.
        """
        with self._session.progress_token(progress_callback) as meta:
            return await self._call_tool(name, arguments, meta)

    async def _call_tool(
        self, name: str, arguments: Mapping[str, Any] | None, meta: dict[str, Any]
    ) -> types.CallToolResult:
        base: dict[str, Any] = {"name": name}
        if arguments is not None:
            base["arguments"] = dict(arguments)
        if meta:
            base["_meta"] = meta

        async def send(responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
            return await self._send_tool_call(name, arguments, round_params(base, responses, state))

        claims = self.active_claims()
        result = await self._drive(await send(None, None), send, f"tools/call {name!r}", claims)
        claim = claims.get(result.get("resultType"))  # pyright: ignore[reportArgumentType]
        if claim is None:
            return _parse(types.CallToolResult, result)
        claimed = claim.model.model_validate(result, by_alias=True, by_name=False)
        return await self.resolve_claim(claim, claimed, name)

    def active_claims(self) -> dict[str, Any]:
        """The `tools/call` result shapes this client's extensions claim here, by `resultType`."""
        if self._session.era != "modern":
            return {}
        return self._session.extensions.claims_at(self._session.protocol_version)

    async def resolve_claim(self, claim: Any, claimed: BaseModel, name: str) -> types.CallToolResult:
        """Finish a claimed result with its claim's resolver, which may send follow-ups on `session`."""
        timeout = self._session.read_timeout
        context = ClaimContext(session=self.session, tool_name=name, read_timeout_seconds=timeout)
        return await claim.resolve(claimed, context)

    async def _send_tool_call(
        self, name: str, arguments: Mapping[str, Any] | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            return await self._session.send(
                "tools/call", params, headers=self._param_headers(name, arguments)
            )
        except MCPError as mismatch:
            if mismatch.code != HEADER_MISMATCH or not self._mirrors_headers:
                raise
            try:
                await self._relist_until(name)
            except (MCPError, ConnectionLost) as relist_error:
                raise mismatch from relist_error
            return await self._session.send(
                "tools/call", params, headers=self._param_headers(name, arguments)
            )

    # -- prompts and resources ------------------------------------------------------------

    async def list_prompts(self, cursor: str | None = None) -> types.ListPromptsResult:
        """One page of the server's prompts."""
        params = {"cursor": cursor} if cursor is not None else None
        return _parse(types.ListPromptsResult, await self._session.send("prompts/list", params))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> types.GetPromptResult:
        """Render a prompt; answers any questions the server asks along the way."""
        base: dict[str, Any] = {"name": name}
        if arguments is not None:
            base["arguments"] = dict(arguments)

        async def send(responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
            return await self._session.send("prompts/get", round_params(base, responses, state))

        result = await self._drive(await send(None, None), send, f"prompts/get {name!r}")
        return _parse(types.GetPromptResult, result)

    async def list_resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        """One page of the server's resources."""
        params = {"cursor": cursor} if cursor is not None else None
        return _parse(types.ListResourcesResult, await self._session.send("resources/list", params))

    async def list_resource_templates(self, cursor: str | None = None) -> types.ListResourceTemplatesResult:
        """One page of the server's resource templates."""
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self._session.send("resources/templates/list", params)
        return _parse(types.ListResourceTemplatesResult, raw)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read a resource; answers any questions the server asks along the way."""
        base: dict[str, Any] = {"uri": uri}

        async def send(responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
            return await self._session.send("resources/read", round_params(base, responses, state))

        result = await self._drive(await send(None, None), send, f"resources/read {uri!r}")
        return _parse(types.ReadResourceResult, result)

    # -- the official SDK's client surface ------------------------------------------------

    @property
    def session(self) -> SessionView:
        """The SDK's `ClientSession` calls (`client.session.call_tool(..., allow_input_required=True)`)."""
        return SessionView(self)

    def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
    ) -> AbstractAsyncContextManager[Subscription]:
        """Open a `subscriptions/listen` stream of change events (2026-07-28), as the SDK's client:

            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    tools = await client.list_tools()  # refetch on change

        Entering waits for the acknowledgement (`subscription.honored`); a graceful end by the
        server ends the loop, a dropped stream raises `SubscriptionLost`. Raises
        `ListenNotSupportedError` in the handshake era (use `subscribe_resource` there).
        """
        return listen(
            self._session,
            tools_list_changed=tools_list_changed,
            prompts_list_changed=prompts_list_changed,
            resources_list_changed=resources_list_changed,
            resource_subscriptions=resource_subscriptions,
        )

    async def subscribe_resource(self, uri: str) -> types.EmptyResult:
        """Ask for `notifications/resources/updated` of `uri` (handshake era; they reach
        `message_handler`). At 2026-07-28 use `listen(resource_subscriptions=[uri])`.

        Over HTTP this opens the session's GET stream, where those notifications travel."""
        channel = self._session.channel
        if isinstance(channel, HttpChannel):
            await channel.open_standalone()  # first: what is sent before it opens is not kept
        await self._session.send("resources/subscribe", {"uri": uri})
        return types.EmptyResult()

    async def unsubscribe_resource(self, uri: str) -> types.EmptyResult:
        """Stop the updates `subscribe_resource(uri)` asked for (handshake era)."""
        await self._session.send("resources/unsubscribe", {"uri": uri})
        return types.EmptyResult()

    async def send_ping(self) -> types.EmptyResult:
        """Ping the server (`ping`); an error answer raises `MCPError`."""
        await self._session.send("ping")
        return types.EmptyResult()

    async def complete(
        self,
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None = None,
    ) -> types.CompleteResult:
        """Ask the server to complete a prompt argument or a template variable (`completion/complete`)."""
        params = completion_params(ref, argument, context_arguments)
        return _parse(types.CompleteResult, await self._session.send("completion/complete", params))

    async def call_tool_round(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        params: dict[str, Any],
        progress_callback: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """One `tools/call` request with `params` as given (for `client.session`): its raw result."""
        with self._session.progress_token(progress_callback) as meta:
            if meta:
                params = {**params, "_meta": {**params.get("_meta", {}), **meta}}
            return await self._send_tool_call(name, arguments, params)

    async def send_request(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """One request, its raw `result` (for `client.session`)."""
        return await self._session.send(method, params)

    async def drive(
        self, first: dict[str, Any], send: Resend, what: str, claimed: Collection[str] = ()
    ) -> dict[str, Any]:
        """Answer the rounds `first` asks for with the callbacks, to the final raw result."""
        return await self._drive(first, send, what, claimed)

    async def _drive(
        self, first: dict[str, Any], send: Resend, what: str, claimed: Collection[str] = ()
    ) -> dict[str, Any]:
        if self._session.era != "modern":
            return first

        def read(result: dict[str, Any]) -> dict[str, Any] | InputRequired:
            if result.get("resultType") in claimed:  # an extension's shape: its claim finishes it
                return result
            pending = read_input_required(result, what)
            return result if pending is None else pending

        async def resend(answers: dict[str, Any] | None, state: str | None) -> dict[str, Any] | InputRequired:
            return read(await send(answers, state))

        return await drive_rounds(
            read(first),
            send=resend,
            answer=self._session.answer_input_request,
            max_rounds=self._max_rounds,
            what=what,
        )


def _parse(model: type[_ResultT], raw: Mapping[str, Any]) -> _ResultT:
    return model.model_validate(raw, by_alias=True, by_name=False)


_T = TypeVar("_T")


def _connected(value: _T | None) -> _T:
    if value is None:
        msg = "The client is not connected; use it as `async with Client(...) as client:`"
        raise RuntimeError(msg)
    return value


def _classify_target(target: object) -> str | StdioTarget | ChannelTarget | RunnableServer:
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            return target
        argv = shlex.split(target)
        if not argv:
            msg = "Client('') has no command to run; pass a URL, a command or a server object"
            raise ValueError(msg)
        return StdioTarget(argv[0], tuple(argv[1:]))
    if isinstance(target, StdioTarget | ChannelTarget):
        return target
    if isinstance(target, list | tuple):
        argv = [str(part) for part in cast("Sequence[object]", target)]
        if not argv:
            msg = "Client([]) has no command to run; pass the program and its arguments"
            raise ValueError(msg)
        return StdioTarget(argv[0], tuple(argv[1:]))
    if callable(getattr(target, "running", None)):
        return cast("RunnableServer", target)
    msg = (
        f"Client() cannot connect to a {type(target).__name__}; pass a URL, a command "
        "(a list of strings or a StdioTarget), or an MCPServer/Server object"
    )
    raise TypeError(msg)
