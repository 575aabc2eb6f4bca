"""What a resolver may ask instead of answering: `Elicit`, `Sample`, `ListRoots`, and the outcomes."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar, get_args, get_origin

from mcp_types import (
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitResult,
    IncludeContext,
    ListRootsResult,
    ModelPreferences,
    SamplingMessage,
    Tool,
    ToolChoice,
)
from pydantic import BaseModel, ValidationError
from typing_extensions import TypeAliasType

from mcpdi._elicit_schema import render_elicitation_schema
from mcpdi.engine import Question

__all__ = (
    "AcceptedElicitation",
    "AnswerRejected",
    "AskModel",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Default",
    "Elicit",
    "ElicitationResult",
    "Fallback",
    "FallbackAnswer",
    "ListRoots",
    "MCPQuestion",
    "MissingCapability",
    "RejectedAnswer",
    "Sample",
)

ModelT = TypeVar("ModelT", bound=BaseModel)
DataT = TypeVar("DataT")


class AcceptedElicitation(BaseModel, Generic[DataT]):
    """The person answered; `data` is the answer, validated against the requested model."""

    action: Literal["accept"] = "accept"
    data: DataT


class DeclinedElicitation(BaseModel):
    """The person said no to the question."""

    action: Literal["decline"] = "decline"


class CancelledElicitation(BaseModel):
    """The person dismissed the question without answering."""

    action: Literal["cancel"] = "cancel"


ElicitationResult = TypeAliasType(
    "ElicitationResult",
    AcceptedElicitation[DataT] | DeclinedElicitation | CancelledElicitation,
    type_params=(DataT,),
)
"""The full outcome of an elicitation; annotate a consumer with it to branch on decline/cancel."""

OUTCOME_TYPES: tuple[type[BaseModel], ...] = (AcceptedElicitation, DeclinedElicitation, CancelledElicitation)


def unaliased(annotation: Any) -> Any:
    """`annotation` with the author's own type aliases (`TypeAliasType`, generic ones with their
    arguments) replaced by what they stand for: `Outcome[Confirm]` reads as
    `ElicitationResult[Confirm]`. `ElicitationResult` itself stays as it is."""
    origin = get_origin(annotation)
    alias = annotation if origin is None else origin
    if not isinstance(alias, TypeAliasType) or alias is ElicitationResult:
        return annotation
    value: Any = alias.__value__
    if origin is not None and alias.__type_params__:
        value = value[get_args(annotation)]
    return unaliased(value)


class AnswerRejected(Exception):
    """The client's answer does not fit the question (wrong kind, missing or invalid content)."""


@dataclass(frozen=True, slots=True)
class RejectedAnswer:
    """What `resolve_answer` gives for an answer that does not fit: the consumer's edge, which
    knows the asking resolver's name, turns it into `AnswerRejected`."""

    reason: str


def _validated_result(result_type: type[BaseModel], payload: Any) -> Any:
    """The client's result as `result_type`, or a `RejectedAnswer` when it is of another kind."""
    try:
        return result_type.model_validate(payload)
    except ValidationError:
        msg = "received a response of the wrong kind"
        return RejectedAnswer(msg)


@dataclass(frozen=True, slots=True)
class Default:
    """Fallback: when the client cannot answer, the consumer gets `value` as if it were the answer."""

    value: Any


@dataclass(frozen=True, slots=True)
class AskModel:
    """Fallback: when the client cannot answer, the call ends with a tool error the model reads.

    The error asks the model to call the tool again with the value as an argument: the tool
    arguments the asking resolver takes (the resolver returns the value itself when one is
    given), or `argument` when named here. `hint` is added to the message as written.
    """

    argument: str | None = None
    hint: str | None = None


Fallback = Default | AskModel
"""What a question does when the client cannot answer it (`fallback=` of Elicit, Sample, ListRoots)."""


@dataclass(frozen=True, slots=True)
class FallbackAnswer:
    """The answer the server gives itself from a `Default` (never comes from a client)."""

    value: Any


@dataclass(frozen=True, slots=True)
class MissingCapability:
    """What a question needs from the client that the client did not declare."""

    name: str  # as the message says it: "form elicitation", "sampling.tools", ...
    required: Mapping[str, Any]  # the `requiredCapabilities` object of the -32021 error


class MCPQuestion(Question):
    """A question that travels as an MCP server-to-client request (`method` + params).

    `fallback` says what happens when the client cannot answer (it lacks the capability, or
    the connection cannot carry a request to it); None is the -32021 error. It is not part of
    the rendering, so it does not change which answer counts.
    """

    __slots__ = ("_fallback",)
    method: ClassVar[str]

    @property
    def fallback(self) -> Fallback | None:
        return getattr(self, "_fallback", None)  # a subclass that sets none has none

    @property
    def subject(self) -> str:
        """What is asked, as an error message names it."""
        return f"a {self.method} request"

    def wire_params(self, *, modern: bool) -> dict[str, Any] | None:
        """The request params as this era's wire carries them (None: a request without params)."""
        return dict(self.render()) or None

    def missing_capability(self, capabilities: ClientCapabilities | None) -> MissingCapability | None:
        raise NotImplementedError


class Elicit(MCPQuestion, Generic[ModelT]):
    """Ask the person at the host to fill in `schema` (form mode); the consumer gets the model."""

    __slots__ = ("_render", "message", "schema")
    method: ClassVar[str] = "elicitation/create"

    def __init__(self, message: str, schema: type[ModelT], *, fallback: Fallback | None = None) -> None:
        self.message = message
        self.schema = schema
        requested = render_elicitation_schema(schema)
        self._render: dict[str, Any] = {"mode": "form", "message": message, "requestedSchema": requested}
        self._fallback = _checked_fallback(f"Elicit({message!r}, {schema.__qualname__})", fallback, schema)

    @property
    def subject(self) -> str:
        return f"the question {self.message!r}"

    def render(self) -> Mapping[str, Any]:
        return self._render

    def wire_params(self, *, modern: bool) -> dict[str, Any] | None:
        if not modern:
            return dict(self._render)
        # The 2026-07-28 wire carries the requested schema without its top-level title.
        requested = {k: v for k, v in self._render["requestedSchema"].items() if k != "title"}
        return {**self._render, "requestedSchema": requested}

    def resolve_answer(self, payload: Any) -> Any:
        if isinstance(payload, FallbackAnswer):
            return AcceptedElicitation[Any](data=payload.value)
        try:
            result = ElicitResult.model_validate(payload)
        except ValidationError:
            msg = "received a non-elicitation response"
            return RejectedAnswer(msg)
        if result.action == "decline":
            return DeclinedElicitation()
        if result.action == "cancel":
            return CancelledElicitation()
        if result.content is None:
            msg = "received an accepted elicitation with no content"
            return RejectedAnswer(msg)
        try:
            data = self.schema.model_validate(result.content)
        except ValidationError:
            msg = "received an accepted elicitation whose content does not match the requested schema"
            return RejectedAnswer(msg)
        return AcceptedElicitation[Any](data=data)

    def missing_capability(self, capabilities: ClientCapabilities | None) -> MissingCapability | None:
        elicitation = capabilities.elicitation if capabilities else None
        # A bare `elicitation: {}` means form mode; a url-only declaration does not.
        if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
            return None
        return MissingCapability("form elicitation", {"elicitation": {"form": {}}})

    def __repr__(self) -> str:
        return f"Elicit({self.message!r}, {self.schema.__qualname__})"


def _checked_fallback(question: str, fallback: Fallback | None, answer: type[BaseModel]) -> Fallback | None:
    """A `Default` must be what the client would have answered (a model, or its JSON)."""
    if not isinstance(fallback, Default) or isinstance(fallback.value, answer):
        return fallback
    try:
        return Default(answer.model_validate(fallback.value))
    except ValidationError as error:
        msg = f"{question}: the fallback Default is not a {answer.__qualname__}: {error}"
        raise TypeError(msg) from None


def check_tool_results(messages: Sequence[SamplingMessage]) -> None:
    """The last message's tool results must answer exactly the tool uses of the one before."""
    if not messages:
        return
    last = messages[-1].content_as_list
    previous = messages[-2].content_as_list if len(messages) > 1 else []
    results = {block.tool_use_id for block in last if block.type == "tool_result"}
    uses = {block.id for block in previous if block.type == "tool_use"}
    if results and any(block.type != "tool_result" for block in last):
        msg = "Sample: a message with tool_result blocks must contain nothing else"
        raise ValueError(msg)
    if (results or uses) and results != uses:
        msg = (
            f"Sample: the tool_result blocks of the last message ({sorted(results)}) must answer "
            f"exactly the tool_use blocks of the message before it ({sorted(uses)})"
        )
        raise ValueError(msg)


class Sample(MCPQuestion):
    """Ask the client's LLM (`sampling/createMessage`); the consumer gets a `CreateMessageResult`.

    With `tools` or `tool_choice` the consumer gets a `CreateMessageResultWithTools`, and the
    client must declare `sampling.tools`.
    """

    __slots__ = ("_render", "params")
    method: ClassVar[str] = "sampling/createMessage"

    def __init__(
        self,
        messages: Sequence[SamplingMessage],
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
    ) -> None:
        if include_context not in (None, "none"):
            warnings.warn(
                f"include_context={include_context!r} is deprecated since protocol 2026-07-28; "
                "leave it unset or pass 'none'",
                DeprecationWarning,
                stacklevel=2,
            )
        check_tool_results(messages)
        self.params = CreateMessageRequestParams(
            messages=list(messages),
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            stop_sequences=list(stop_sequences) if stop_sequences is not None else None,
            metadata=metadata,
            model_preferences=model_preferences,
            tools=list(tools) if tools is not None else None,
            tool_choice=tool_choice,
        )
        self._render: dict[str, Any] = self.params.model_dump(mode="json", by_alias=True, exclude_none=True)
        self._fallback = _checked_fallback("Sample", fallback, self._result_type())

    @property
    def subject(self) -> str:
        return "a request to the client's LLM (sampling)"

    def _result_type(self) -> type[BaseModel]:
        return CreateMessageResultWithTools if self.uses_tools else CreateMessageResult

    @property
    def uses_tools(self) -> bool:
        return self.params.tools is not None or self.params.tool_choice is not None

    def render(self) -> Mapping[str, Any]:
        return self._render

    def resolve_answer(self, payload: Any) -> Any:
        if isinstance(payload, FallbackAnswer):
            return payload.value
        return _validated_result(self._result_type(), payload)

    def missing_capability(self, capabilities: ClientCapabilities | None) -> MissingCapability | None:
        sampling = capabilities.sampling if capabilities else None
        if self.uses_tools and (sampling is None or sampling.tools is None):
            return MissingCapability("sampling.tools", {"sampling": {"tools": {}}})
        if sampling is None:
            return MissingCapability("sampling", {"sampling": {}})
        return None

    def __repr__(self) -> str:
        return f"Sample({len(self.params.messages)} messages, max_tokens={self.params.max_tokens})"


class ListRoots(MCPQuestion):
    """Ask the client for its roots (`roots/list`); the consumer gets a `ListRootsResult`."""

    __slots__ = ()
    method: ClassVar[str] = "roots/list"
    _RENDER: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, *, fallback: Fallback | None = None) -> None:
        self._fallback = _checked_fallback("ListRoots", fallback, ListRootsResult)

    @property
    def subject(self) -> str:
        return "a request for the client's roots"

    def render(self) -> Mapping[str, Any]:
        return self._RENDER

    def resolve_answer(self, payload: Any) -> Any:
        if isinstance(payload, FallbackAnswer):
            return payload.value
        return _validated_result(ListRootsResult, payload)

    def missing_capability(self, capabilities: ClientCapabilities | None) -> MissingCapability | None:
        if capabilities is not None and capabilities.roots is not None:
            return None
        return MissingCapability("roots", {"roots": {}})

    def __repr__(self) -> str:
        return "ListRoots()"
