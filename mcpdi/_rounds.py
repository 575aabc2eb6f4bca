"""Running one call's plan: asking mid-call (handshake era) or in sealed rounds (2026-07-28).

The 2026-07-28 inner state, sealed in `requestState`:
`{"v": 1, "outcomes": {key: {"q": digest, "p": payload}}, "asked": {key: digest}, "churn": {key: n}}`.
`asked` holds the questions handed out last round; an answer counts only if the live question
still has that digest, and a recorded outcome wins over anything sent again for its key.
`churn` counts the rounds in which a key was asked with a different question than before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_types import InputRequiredResult

from mcpdi._asking import MCPQuestion
from mcpdi._auth import get_access_token, principal_of
from mcpdi._context import Context, missing_capability_error
from mcpdi._errors import ToolError
from mcpdi._state import Binding, InvalidRequestState, RequestStateSecurity
from mcpdi._telemetry import current_round
from mcpdi.engine import Answer, Asked, NeedsInput, Plan
from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError, NoBackChannel

__all__ = (
    "ASKING",
    "MAX_CHANGED_ROUNDS",
    "CallTarget",
    "Pending",
    "RoundParams",
    "open_body_state",
    "run_legacy",
    "run_modern",
    "run_request",
    "seal_body_state",
)

logger = logging.getLogger("mcpdi")

ASKING: ContextVar[str | None] = ContextVar("mcpdi_asking", default=None)
"""The key of the question being sent mid-call (handshake era), for in-memory clients."""

STATE_VERSION = 1
MAX_CHANGED_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Pending:
    """A round that ends asking the client: send `result` back."""

    result: InputRequiredResult


@dataclass(frozen=True, slots=True)
class CallTarget:
    """What this call's `requestState` is bound to."""

    method: str  # "tools/call", "prompts/get", "resources/read"
    name: str  # the tool or prompt name, or the resource URI
    raw_arguments: Mapping[str, Any] | None
    audience: str

    def binding(self, ctx: Context[Any]) -> Binding:
        principal = ctx.request_context.principal if ctx.era is not None else None
        if principal is None:
            principal = principal_of(get_access_token())  # bearer auth: the verified caller
        return Binding.of(
            self.method,
            self.name,
            self.raw_arguments,
            audience=self.audience,
            principal=None if principal is None else str(principal),
        )


class RoundParams(Protocol):
    """What the params of `tools/call`, `prompts/get` and `resources/read` carry for the rounds."""

    @property
    def input_responses(self) -> Mapping[str, Any] | None: ...

    @property
    def request_state(self) -> str | None: ...


def invalid_state(reason: str) -> MCPError:
    logger.info("rejected requestState: %s", reason)
    return MCPError(INVALID_PARAMS, "Invalid or expired requestState", {"reason": "invalid_request_state"})


def open_state(security: RequestStateSecurity, token: str | None, binding: Binding) -> dict[str, Any]:
    """The inner state of the call's token; `{}` on the first round. Raises the -32602 error."""
    if token is None:
        return {}
    try:
        return security.open(token, binding)
    except InvalidRequestState as error:
        raise invalid_state(error.reason) from None


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]


def _payload_of(response: Any) -> Any:
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return response


async def run_modern(
    plan: Plan,
    arguments: Mapping[str, Any],
    ctx: Context[Any],
    *,
    target: CallTarget,
    security: RequestStateSecurity,
    input_responses: Mapping[str, Any] | None,
    request_state: str | None,
) -> Any:
    """One round: the root's result, or `Pending` with the questions of this round."""
    if request_state is None:
        # A first round: nothing was asked yet, so no answer can count.
        current_round.set(1)
        first = await plan.run(arguments, {Context: ctx}, {})
        if not isinstance(first, NeedsInput):
            return first
        return Pending(_ask_round(first, ctx, {}, {}, {}, target.binding(ctx), security, 1))
    inner = open_state(security, request_state, target.binding(ctx))
    if inner.get("v") != STATE_VERSION:
        inner = {}  # a state from another version of this layer: start over, ask again
    previous = inner.get("round")
    round_number = previous + 1 if isinstance(previous, int) else 1
    current_round.set(round_number)
    outcomes: dict[str, Any] = dict(_as_mapping(inner.get("outcomes")))
    asked: Mapping[str, Any] = _as_mapping(inner.get("asked"))
    churn: dict[str, int] = {k: v for k, v in _as_mapping(inner.get("churn")).items() if isinstance(v, int)}
    responses = input_responses or {}

    # Identical questions from different resolvers were asked once, under the first key.
    first_key_of: dict[str, str] = {}
    for key, digest in asked.items():
        first_key_of.setdefault(str(digest), key)
    for key, digest in asked.items():
        if key in outcomes or not isinstance(digest, str):
            continue
        response = responses.get(key, responses.get(first_key_of[digest]))
        if response is not None:
            outcomes[key] = {"q": digest, "p": _payload_of(response)}

    answers: dict[str, Answer] = {}
    for key, record in outcomes.items():
        fields = _as_mapping(record)
        if "q" in fields:
            answers[key] = Answer(str(fields["q"]), fields.get("p"))
    result = await plan.run(arguments, {Context: ctx}, answers)
    if not isinstance(result, NeedsInput):
        return result
    return Pending(
        _ask_round(result, ctx, outcomes, asked, churn, target.binding(ctx), security, round_number)
    )


def _ask_round(
    needs: NeedsInput,
    ctx: Context[Any],
    outcomes: dict[str, Any],
    previously_asked: Mapping[str, Any],
    churn: dict[str, int],
    binding: Binding,
    security: RequestStateSecurity,
    round_number: int,
) -> InputRequiredResult:
    requests: dict[str, Any] = {}
    asked: dict[str, str] = {}
    keys_by_digest: dict[str, str] = {}
    for item in needs.questions:
        question = _mcp_question(item)
        error = missing_capability_error(question, ctx.client_capabilities, f"resolver {item.step.name!r}")
        if error is not None:
            raise error
        before = previously_asked.get(item.key)
        if before is not None and before != item.digest:
            churn[item.key] = churn.get(item.key, 0) + 1
            if churn[item.key] > MAX_CHANGED_ROUNDS:
                msg = (
                    f"Resolver {item.step.name!r} asked a different question in each of "
                    f"{churn[item.key]} rounds, so no answer can ever match; build the question "
                    "only from the tool's arguments and earlier answers (no clocks or counters)"
                )
                raise ToolError(msg)
        outcomes.pop(item.key, None)  # an outcome for an older wording of this question is void
        asked[item.key] = item.digest
        if item.digest in keys_by_digest:
            continue  # the same question from another resolver: ask it once
        keys_by_digest[item.digest] = item.key
        request: dict[str, Any] = {"method": question.method}
        params = question.wire_params(modern=True)
        if params is not None:
            request["params"] = params
        requests[item.key] = request
    inner: dict[str, Any] = {"v": STATE_VERSION, "outcomes": outcomes, "asked": asked, "round": round_number}
    if churn:
        inner["churn"] = churn
    token = security.seal(binding, inner)
    if len(token) > security.max_token_size:
        msg = (
            f"the answers recorded for this call need a requestState of {len(token)} characters, "
            f"over the limit of {security.max_token_size}; ask for less per question (a smaller "
            "max_tokens for Sample), or raise RequestStateSecurity(max_token_size=...)"
        )
        raise ToolError(msg)
    return InputRequiredResult.model_validate({"inputRequests": requests, "requestState": token})


def _mcp_question(item: Asked) -> MCPQuestion:
    question = item.question
    if not isinstance(question, MCPQuestion):
        msg = (
            f"Resolver {item.step.name!r} ({item.step.location}) returned a "
            f"{type(question).__qualname__}, which MCP cannot ask; return Elicit, Sample or ListRoots"
        )
        raise TypeError(msg)
    return question


async def run_legacy(plan: Plan, arguments: Mapping[str, Any], ctx: Context[Any]) -> Any:
    """The whole call at once: each question is sent to the client as it comes up."""
    answered: dict[str, Any] = {}

    async def ask(item: Asked) -> Any:
        if item.digest in answered:  # the same question from another resolver
            return answered[item.digest]
        question = _mcp_question(item)
        if ctx.era is not None:
            error = missing_capability_error(
                question, ctx.client_capabilities, f"resolver {item.step.name!r}"
            )
            if error is not None:
                raise error
        token = ASKING.set(item.key)
        try:
            payload = await ctx.request_context.send_request(
                question.method, question.wire_params(modern=False)
            )
        except NoBackChannel as error:
            msg = (
                f"Resolver {item.step.name!r} needs to ask the client ({question.method}), but this "
                "connection cannot carry requests to the client; connect over stdio or a streaming "
                "HTTP session, or with protocol 2026-07-28"
            )
            raise ToolError(msg) from error
        finally:
            ASKING.reset(token)
        answered[item.digest] = payload
        return payload

    return await plan.run(arguments, {Context: ctx}, None, ask)


def seal_body_state(
    security: RequestStateSecurity, binding: Binding, result: InputRequiredResult
) -> InputRequiredResult:
    """Seal the state of a tool that drives its own rounds (returns `InputRequiredResult` itself)."""
    if result.request_state is None:
        return result
    token = security.seal(binding, {"v": STATE_VERSION, "body": result.request_state})
    return result.model_copy(update={"request_state": token})


def open_body_state(security: RequestStateSecurity, token: str | None, binding: Binding) -> str | None:
    """The tool's own state from last round (None on the first round)."""
    if token is None:
        return None
    inner = open_state(security, token, binding)
    body = inner.get("body")
    if not isinstance(body, str):
        raise invalid_state("the token was not sealed for a tool that drives its own rounds")
    return body


async def run_request(
    plan: Plan,
    arguments: Mapping[str, Any],
    ctx: Context[Any],
    *,
    target: CallTarget,
    security: RequestStateSecurity,
    params: RoundParams,
) -> Any:
    """One request's round in whichever era it came: the root's result, or `Pending`.

    A plan without resolvers leaves the rounds to its body: it reads `ctx.input_responses` and
    `ctx.request_state` and may return an `InputRequiredResult`, whose state is sealed here.
    """
    input_responses, request_state = params.input_responses, params.request_state
    modern = ctx.era == "modern"
    if not plan.steps:
        state = None
        if modern and request_state is not None:
            state = open_body_state(security, request_state, target.binding(ctx))
        if input_responses is not None or state is not None:
            ctx = ctx.with_input(input_responses, state)  # pyright: ignore[reportArgumentType]
        value = await run_legacy(plan, arguments, ctx)
        if isinstance(value, InputRequiredResult):
            if not modern:
                msg = "returned an InputRequiredResult, which only protocol 2026-07-28 can carry"
                raise RuntimeError(msg)
            return Pending(seal_body_state(security, target.binding(ctx), value))
        return value
    if modern:
        value = await run_modern(
            plan,
            arguments,
            ctx,
            target=target,
            security=security,
            input_responses=input_responses,
            request_state=request_state,
        )
    else:
        value = await run_legacy(plan, arguments, ctx)
    if isinstance(value, InputRequiredResult):
        msg = "returned an InputRequiredResult although its resolvers drive the rounds"
        raise RuntimeError(msg)
    return value
