"""`Context`: what a tool, prompt, resource or resolver can know and do during one request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal

from mcp_types import (
    ClientCapabilities,
    CreateMessageResult,
    ElicitResult,
    Implementation,
    IncludeContext,
    InputResponses,
    ListRootsResult,
    ModelPreferences,
    SamplingMessage,
    Tool,
    ToolChoice,
)
from pydantic import BaseModel
from typing_extensions import TypeVar

from mcpdi._asking import (
    AnswerRejected,
    Elicit,
    ElicitationResult,
    Fallback,
    ListRoots,
    MCPQuestion,
    RejectedAnswer,
    Sample,
)
from mcpdi._auth import AccessToken, get_access_token
from mcpdi._fallbacks import NO_BACK_CHANNEL, fall_back, missing_reason
from mcpdi._notifications import Session, elicit_url
from mcpdi.lowlevel._errors import MISSING_CAPABILITY, MCPError, NoBackChannel
from mcpdi.lowlevel._subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
    event_notification,
)

if TYPE_CHECKING:
    from mcpdi._in_memory._calls import ReadResourceContents
    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Context", "missing_capability_error")

LifespanT = TypeVar("LifespanT", default=Any)
RequestT = TypeVar("RequestT", default=Any)  # the reference SDK's second parameter; mcpdi does not use it
ModelT = TypeVar("ModelT", bound=BaseModel)
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def missing_capability_error(
    question: MCPQuestion, capabilities: ClientCapabilities | None, asker: str
) -> MCPError | None:
    """The -32021 error for a question the client cannot answer, or None when it can."""
    missing = question.missing_capability(capabilities)
    if missing is None:
        return None
    msg = f"Client did not declare the {missing.name} capability required by {asker}"
    return MCPError(MISSING_CAPABILITY, msg, {"requiredCapabilities": dict(missing.required)})


class Context(Generic[LifespanT, RequestT]):
    """Annotate a parameter with `Context` to receive it; resolvers receive the same object.

    Everything request-specific lives here: the HTTP headers, the lifespan object, the
    client's capabilities, logging and progress, and (in the handshake era) asking the
    client directly with `elicit`, `sample` and `list_roots`.
    """

    __slots__ = ("_input_responses", "_request_context", "_request_state", "_server")

    def __init__(
        self,
        request_context: ServerRequestContext[LifespanT] | None = None,
        server: MCPServer[Any] | None = None,
        *,
        input_responses: InputResponses | None = None,
        request_state: str | None = None,
    ) -> None:
        self._request_context = request_context
        self._server = server
        self._input_responses = input_responses
        self._request_state = request_state

    def with_input(
        self, input_responses: InputResponses | None, request_state: str | None
    ) -> Context[LifespanT, RequestT]:
        """This request's context for a tool that drives its own rounds (answers and its state)."""
        return Context(
            self._request_context, self._server, input_responses=input_responses, request_state=request_state
        )

    @property
    def request_context(self) -> ServerRequestContext[LifespanT]:
        """The low-level request context; raises outside of a request."""
        if self._request_context is None:
            msg = "Context is not available outside of a request; use it inside a tool, prompt or resource"
            raise ValueError(msg)
        return self._request_context

    @property
    def mcp_server(self) -> MCPServer[Any] | None:
        """The `MCPServer` handling this request."""
        return self._server

    @property
    def lifespan(self) -> LifespanT:
        """What the server's lifespan yielded (same as `request_context.lifespan_context`)."""
        return self.request_context.lifespan_context

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request headers (lower-cased names); None off HTTP. Client input, not identity."""
        if self._request_context is None:
            return None
        return self._request_context.headers

    @property
    def era(self) -> Literal["legacy", "modern"] | None:
        """The request's protocol era: "modern" at 2026-07-28; "legacy" in the handshake era (the
        versions `initialize` negotiates), which mcpdi's API spells `legacy` throughout
        (`Connection.era`, `mcpdi run --mode legacy`); None outside a request."""
        return self._request_context.era if self._request_context is not None else None

    @property
    def protocol_version(self) -> str | None:
        return self._request_context.protocol_version if self._request_context is not None else None

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        return self._request_context.client_capabilities if self._request_context is not None else None

    @property
    def client_info(self) -> Implementation | None:
        return self._request_context.client_info if self._request_context is not None else None

    @property
    def request_id(self) -> str:
        return str(self.request_context.request_id)

    @property
    def access_token(self) -> AccessToken | None:
        """The verified bearer token of this request (HTTP with auth); None otherwise."""
        return get_access_token()

    @property
    def input_responses(self) -> InputResponses | None:
        """A tool that returns its own `InputRequiredResult`: the client's answers this round."""
        return self._input_responses

    @property
    def request_state(self) -> str | None:
        """A tool that returns its own `InputRequiredResult`: the state it handed out last round."""
        return self._request_state

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send progress if the client asked for it (a `progressToken`); otherwise do nothing."""
        await self.request_context.report_progress(progress, total, message)

    async def close_sse_stream(self) -> None:
        """The official SDK's polling hook; with mcpdi the stream stays open, so this does nothing.

        mcpdi's streams resume by `Last-Event-ID` whenever a connection drops, without the
        server closing them on purpose.
        """

    async def close_standalone_sse_stream(self) -> None:
        """As `close_sse_stream`, for the standalone GET stream: does nothing."""

    async def log(self, level: LogLevel, data: Any, *, logger_name: str | None = None) -> None:
        """Send a log message to the client, if it wants messages of this level."""
        await self.request_context.log(level, data, logger_name)

    async def debug(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("debug", data, logger_name=logger_name)

    async def info(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("info", data, logger_name=logger_name)

    async def warning(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("warning", data, logger_name=logger_name)

    async def error(self, data: Any, *, logger_name: str | None = None) -> None:
        await self.log("error", data, logger_name=logger_name)

    async def ask(self, question: MCPQuestion) -> Any:
        """Ask the client now (handshake era) and return the validated answer.

        At 2026-07-28 a request cannot ask mid-call: return `Elicit(...)`/`Sample(...)`/
        `ListRoots()` from a resolver instead, or return an `InputRequiredResult` yourself.
        """
        request = self.request_context
        asker = f"ctx.ask({question!r})"
        # No capabilities: a connection without `initialize` (a session-less HTTP endpoint),
        # where sending tells whether the request can reach the client.
        capabilities = request.client_capabilities if request.era == "legacy" else None
        missing = question.missing_capability(capabilities) if capabilities is not None else None
        if missing is not None:
            fallback = fall_back(None, question, missing_reason(missing.name), asker=asker)
            if fallback is not None:
                return question.resolve_answer(fallback)
            error = missing_capability_error(question, capabilities, "this request")
            if error is not None:
                raise error
        try:
            payload = await request.send_request(question.method, question.wire_params(modern=False))
        except NoBackChannel:
            fallback = fall_back(None, question, NO_BACK_CHANNEL, asker=asker)
            if fallback is None:
                raise
            return question.resolve_answer(fallback)
        answer = question.resolve_answer(payload)
        if isinstance(answer, RejectedAnswer):
            raise AnswerRejected(f"The client's answer to {question!r} {answer.reason}")
        return answer

    async def elicit(
        self, message: str, schema: type[ModelT], *, fallback: Fallback | None = None
    ) -> ElicitationResult[ModelT]:
        """Ask the person at the host to fill in `schema` and return the outcome.

        `fallback` decides when the client cannot answer, as for `Elicit` from a resolver.
        """
        return await self.ask(Elicit(message, schema, fallback=fallback))

    async def sample(
        self,
        messages: Sequence[SamplingMessage] | str,
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        include_context: IncludeContext | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        model_preferences: ModelPreferences | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoice | None = None,
        fallback: Fallback | None = None,
    ) -> CreateMessageResult:
        """Ask the client's LLM for a completion (a plain string is one user message)."""
        if isinstance(messages, str):
            messages = [
                SamplingMessage.model_validate(
                    {"role": "user", "content": {"type": "text", "text": messages}}
                )
            ]
        question = Sample(
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            stop_sequences=stop_sequences,
            metadata=metadata,
            model_preferences=model_preferences,
            tools=tools,
            tool_choice=tool_choice,
            fallback=fallback,
        )
        return await self.ask(question)

    async def list_roots(self, *, fallback: Fallback | None = None) -> ListRootsResult:
        """Ask the client for its roots."""
        return await self.ask(ListRoots(fallback=fallback))

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> ElicitResult:
        """Ask the person to visit `url` out of band (URL-mode elicitation, handshake era).

        The answer says only whether they agreed to go; when the visit is done, send
        `ctx.session.send_elicit_complete(elicitation_id)`. At 2026-07-28, or when the
        client cannot be asked mid-call, raise `UrlElicitationRequiredError` instead.
        """
        return await elicit_url(self.request_context, message, url, elicitation_id)

    async def read_resource(self, uri: str) -> list[ReadResourceContents]:
        """Read one of this server's resources from inside a request; fails as `resources/read` would.

        The resource runs as a fresh request (round one): this request's answers and
        state belong to its own resolvers. A resource that asks a question raises `MCPError`.
        """
        server = self.mcp_server
        if server is None:
            msg = "Context.read_resource needs the MCPServer; use it inside a tool, prompt or resource"
            raise ValueError(msg)
        return await server.read_resource_in(self, uri)

    @property
    def session(self) -> Session:
        """The connection to the client, for notifications the SDK's session sends."""
        return Session(self.request_context)

    async def notify_tools_changed(self) -> None:
        """Tell the clients the tool list changed: the `subscriptions/listen` streams that asked
        (2026-07-28) and, in the handshake era, this request's stream."""
        await self._announce(ToolsListChanged())

    async def notify_prompts_changed(self) -> None:
        """Tell the clients the prompt list changed (as `notify_tools_changed`)."""
        await self._announce(PromptsListChanged())

    async def notify_resources_changed(self) -> None:
        """Tell the clients the resource list changed (as `notify_tools_changed`)."""
        await self._announce(ResourcesListChanged())

    async def notify_resource_updated(self, uri: object) -> None:
        """Tell the clients subscribed to `uri` that it changed (`notifications/resources/updated`):
        the listen streams whose filter names it, and the handshake-era `resources/subscribe`rs."""
        server = self._server
        if server is None:
            await self.session.send_resource_updated(uri)
            return
        await server.subscriptions.announce_updated(str(uri))

    async def _announce(self, event: ServerEvent) -> None:
        server = self._server
        if server is not None:
            await server.subscriptions.bus.publish(event)
        if server is None or self.era == "legacy":
            wire = event_notification(event).model_dump(by_alias=True, mode="json", exclude_none=True)
            await self.request_context.send_notification(wire["method"], wire.get("params"))
