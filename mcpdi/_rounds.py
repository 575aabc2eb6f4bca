"""Running one call's plan: asking mid-call (handshake era) or in sealed rounds (2026-07-28).

What a round carries to the next is a `RoundState` (`mcpdi._state._round`), sealed in
`requestState`. A call-scoped resolver's value is an outcome whose digest is `"kept"`, its
payload the value as JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from mcp_types import (
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
)
from pydantic import BaseModel, ValidationError

from mcpdi._asking import MCPQuestion
from mcpdi._auth import get_access_token, principal_of
from mcpdi._checks import kept_adapter
from mcpdi._context import Context, missing_capability_error
from mcpdi._errors import ToolError
from mcpdi._fallbacks import NO_BACK_CHANNEL, fallback_answers, missing_reason, resolver_fall_back
from mcpdi._state._codec import StateTooLarge
from mcpdi._state._round import AskedQuestion, BodyState, Outcome, RoundState
from mcpdi._state._security import CallBinding, InvalidRequestState, RequestStateSecurity
from mcpdi._telemetry import current_round
from mcpdi.engine import Answer, AppScope, Asked, NeedsInput, Plan
from mcpdi.engine._records import built_fast
from mcpdi.lowlevel._errors import INTERNAL_ERROR, INVALID_PARAMS, MCPError, NoBackChannel

__all__ = (
    "MAX_CHANGED_ROUNDS",
    "CallTarget",
    "Pending",
    "RoundParams",
    "open_body_state",
    "run_asking_inline",
    "run_modern",
    "run_request",
    "seal_body_state",
)

logger = logging.getLogger("mcpdi")

KEPT_RECORD = "kept"  # the digest of a call-scoped value's outcome (a real digest has 22 characters)
MAX_CHANGED_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Pending:
    """A round that ends asking the client: send `result` back."""

    result: InputRequiredResult


@built_fast  # one per call
@dataclass(frozen=True, slots=True)
class CallTarget:
    """What this call's `requestState` is bound to."""

    method: str  # "tools/call", "prompts/get", "resources/read"
    name: str  # the tool or prompt name, or the resource URI
    raw_arguments: Mapping[str, Any] | None
    audience: str

    def binding(self, ctx: Context[Any], security: RequestStateSecurity, *, opening: bool) -> CallBinding:
        """The binding of this call's token; `opening` says whether a token is being opened
        (a failing `bind_principal` then answers -32602) or sealed (-32603)."""
        return CallBinding.of(
            self.method,
            self.name,
            self.raw_arguments,
            audience=self.audience,
            principal=_bound_principal(ctx, security, opening=opening),
        )


def _bound_principal(ctx: Context[Any], security: RequestStateSecurity, *, opening: bool) -> str | None:
    """The policy's `bind_principal` for this request, failing closed when it raises or returns
    anything but a str or None."""
    if security.bind_principal is None:
        return None
    if ctx.era is None:  # outside a request only a bearer token can name the caller
        return principal_of(get_access_token())
    try:
        principal = cast("object", security.bind_principal(ctx.request_context))
    except Exception:
        logger.exception("bind_principal raised while binding requestState")
        reason = "bind_principal raised"
    else:
        if principal is None or isinstance(principal, str):
            return principal
        reason = f"bind_principal returned {type(principal).__name__}, expected str or None"
    if opening:
        raise invalid_state(reason)
    logger.error("refusing to seal requestState: %s", reason)
    raise MCPError(INTERNAL_ERROR, "Internal error")


class RoundParams(Protocol):
    """What the params of `tools/call`, `prompts/get` and `resources/read` carry for the rounds."""

    @property
    def input_responses(self) -> Mapping[str, Any] | None: ...

    @property
    def request_state(self) -> str | None: ...


def context_values(ctx: Context[Any]) -> dict[type, Any]:
    """What the engine injects by type: the `Context`, and the server's `AppScope`."""
    server = ctx.mcp_server
    if server is None:
        return {Context: ctx}
    return {Context: ctx, AppScope: server.app_scope}


def invalid_state(reason: str) -> MCPError:
    logger.info("rejected requestState: %s", reason)
    return MCPError(INVALID_PARAMS, "Invalid or expired requestState", {"reason": "invalid_request_state"})


def seal_state(security: RequestStateSecurity, binding: CallBinding, inner: Mapping[str, Any]) -> str:
    """A token for the next round. `StateTooLarge` passes; any other failure (a codec raising,
    a KMS outage) is logged and answered with a bare -32603, never a tool error with details."""
    try:
        return security.seal(binding, inner)
    except StateTooLarge:
        raise
    except Exception:
        logger.exception("sealing requestState failed")
        raise MCPError(INTERNAL_ERROR, "Internal error") from None


async def open_state(security: RequestStateSecurity, token: str, binding: CallBinding) -> dict[str, Any]:
    """The inner state of the call's token, used up. Raises the -32602 error."""
    try:
        return await security.redeem(token, binding)
    except InvalidRequestState as error:
        raise invalid_state(error.reason) from None


async def open_round_state(security: RequestStateSecurity, token: str, binding: CallBinding) -> RoundState:
    """The resolver-driven state of the call's token. Raises the -32602 error."""
    inner = await open_state(security, token, binding)
    try:
        return RoundState.parse(inner)
    except InvalidRequestState as error:
        raise invalid_state(error.reason) from None


_RESPONSE_TYPES: dict[str, tuple[type[BaseModel], ...]] = {
    "elicitation/create": (ElicitResult,),
    "sampling/createMessage": (CreateMessageResult, CreateMessageResultWithTools),
    "roots/list": (ListRootsResult,),
}


def validated_payload(method: str, response: Any) -> Any:
    """What is recorded for `response` to a question asked with `method`.

    A response of the right kind is kept as its validated wire form (fields the protocol does
    not define are dropped); a response of another kind is recorded as null, which every question refuses
    as a response of the wrong kind, so the call still ends as it would have, without carrying
    the client's bytes from round to round.
    """
    kinds = _RESPONSE_TYPES.get(method)
    if kinds is None:  # a method this layer has no response type for: the question decides
        dump = getattr(response, "model_dump", None)
        return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else response
    model = response if isinstance(response, kinds) else None
    if model is None and not isinstance(response, BaseModel):
        for kind in kinds:
            try:
                model = kind.model_validate(response)
                break
            except ValidationError:
                continue
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def record_responses(state: RoundState, responses: Mapping[str, Any]) -> dict[str, Outcome]:
    """The outcomes after this round's responses: one per question asked last round, at most.

    Identical questions from different resolvers were asked once, under the first key, so a
    response under that key answers all of them.
    """
    outcomes = dict(state.outcomes)
    first_key_of: dict[str, str] = {}
    for key, asked in state.asked.items():
        first_key_of.setdefault(asked.digest, key)
    for key, asked in state.asked.items():
        if key in outcomes:
            continue
        response = responses.get(key, responses.get(first_key_of[asked.digest]))
        if response is not None:
            outcomes[key] = Outcome(asked.digest, validated_payload(asked.method, response))
    return outcomes


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
        # A first round: nothing was asked yet, so no answer can count (and the hot path
        # computes no arguments digest unless it asks).
        if current_round.get() != 1:  # a new request's task has the default, 1: no set needed
            current_round.set(1)
        context = context_values(ctx)
        first = await plan.run(arguments, context, {})  # `_run_with_fallbacks`, its commonest pass inline
        if isinstance(first, NeedsInput):
            first = await _fall_back(plan, arguments, ctx, context, {}, first)
        if not isinstance(first, NeedsInput):
            return first
        kept = _keep(plan, first, {})
        return Pending(
            _ask_round(
                first, ctx, kept, RoundState(), target.binding(ctx, security, opening=False), security, 1
            )
        )
    binding = target.binding(ctx, security, opening=True)
    state = await open_round_state(security, request_state, binding)
    round_number = state.round + 1
    current_round.set(round_number)
    outcomes = record_responses(state, input_responses or {})
    answers: dict[str, Answer] = {}
    for key, outcome in outcomes.items():
        if outcome.digest == KEPT_RECORD:
            _read_kept(plan, key, outcome.payload, answers)
        else:
            answers[key] = Answer(outcome.digest, outcome.payload)
    result = await _run_with_fallbacks(plan, arguments, ctx, answers)
    if not isinstance(result, NeedsInput):
        return result
    _keep(plan, result, outcomes)
    return Pending(_ask_round(result, ctx, outcomes, state, binding, security, round_number))


async def _run_with_fallbacks(
    plan: Plan, arguments: Mapping[str, Any], ctx: Context[Any], answers: Mapping[str, Answer]
) -> Any:
    """Run the round; questions the client cannot answer but whose fallback can are answered here.

    Each pass answers at least one more step, so there are at most as many passes as steps.
    """
    context = context_values(ctx)
    result = await plan.run(arguments, context, answers)
    if not isinstance(result, NeedsInput):
        return result
    return await _fall_back(plan, arguments, ctx, context, answers, result)


async def _fall_back(
    plan: Plan,
    arguments: Mapping[str, Any],
    ctx: Context[Any],
    context: dict[type, Any],
    answers: Mapping[str, Answer],
    result: Any,
) -> Any:
    """`_run_with_fallbacks` from its first pass's questions (`result`, a `NeedsInput`) on."""
    for _ in plan.steps:
        fallbacks = fallback_answers(plan.name, result, ctx.client_capabilities)
        if not fallbacks:
            break
        answers = {**answers, **fallbacks}
        result = await plan.run(arguments, context, answers)
        if not isinstance(result, NeedsInput):
            break
    return result


def _keep(plan: Plan, needs: NeedsInput, outcomes: dict[str, Outcome]) -> dict[str, Outcome]:
    """Record the round's call-scoped values, encoded by their resolvers' return annotations."""
    if needs.kept:
        fns = {step.key: step.fn for step in plan.steps if step.key in needs.kept}
        for key, value in needs.kept.items():
            outcomes[key] = Outcome(KEPT_RECORD, kept_adapter(fns[key]).dump_python(value, mode="json"))
    return outcomes


def _read_kept(plan: Plan, key: str, payload: Any, answers: dict[str, Answer]) -> None:
    """A call-scoped value from an earlier round, validated back into its type."""
    step = next((s for s in plan.steps if s.key == key and s.scope == "call"), None)
    if step is None:
        return  # the tool changed since that round: the step computes its value again
    try:
        answers[key] = Answer.kept(kept_adapter(step.fn).validate_python(payload))
    except ValidationError:
        raise invalid_state("a kept value does not match its type") from None


def _ask_round(
    needs: NeedsInput,
    ctx: Context[Any],
    outcomes: dict[str, Outcome],
    previous: RoundState,
    binding: CallBinding,
    security: RequestStateSecurity,
    round_number: int,
) -> InputRequiredResult:
    requests: dict[str, Any] = {}
    asked: dict[str, AskedQuestion] = {}
    churn = dict(previous.churn)
    keys_by_digest: dict[str, str] = {}
    for item in needs.questions:
        question = _mcp_question(item)
        error = missing_capability_error(question, ctx.client_capabilities, f"resolver {item.step.name!r}")
        if error is not None:
            raise error
        before = previous.asked.get(item.key)
        if before is not None and before.digest != item.digest:
            churn[item.key] = churn.get(item.key, 0) + 1
            if churn[item.key] > MAX_CHANGED_ROUNDS:
                msg = (
                    f"Resolver {item.step.name!r} asked a different question in each of "
                    f"{churn[item.key]} rounds, so no answer can ever match; build the question "
                    "only from the tool's arguments and earlier answers (no clocks or counters)"
                )
                raise ToolError(msg)
        outcomes.pop(item.key, None)  # an outcome for an older wording of this question is void
        asked[item.key] = AskedQuestion(item.digest, question.method)
        if item.digest in keys_by_digest:
            continue  # the same question from another resolver: ask it once
        keys_by_digest[item.digest] = item.key
        request: dict[str, Any] = {"method": question.method}
        params = question.wire_params(modern=True)
        if params is not None:
            requests[item.key] = request | {"params": params}
        else:
            requests[item.key] = request
    try:
        token = seal_state(security, binding, RoundState(outcomes, asked, churn, round_number).dump())
    except StateTooLarge as error:
        msg = (
            f"the answers recorded for this call take {error.size} bytes, over the limit of "
            f"{error.limit} for a requestState; ask for less per question (a smaller max_tokens "
            "for Sample)"
        )
        raise ToolError(msg) from None
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


async def run_asking_inline(plan: Plan, arguments: Mapping[str, Any], ctx: Context[Any]) -> Any:
    """The whole call at once: each question is sent to the client as it comes up.

    Also runs the bodies of tools that drive their own rounds (no resolvers), in either era.
    """
    if not plan.steps:  # no resolver: nothing in the plan can ask
        return await plan.run(arguments, context_values(ctx))
    answered: dict[str, Any] = {}

    async def ask(item: Asked) -> Any:
        if item.digest in answered:  # the same question from another resolver
            return answered[item.digest]
        question = _mcp_question(item)
        # Capabilities are unknown (None) on a connection that saw no `initialize`, such as a
        # session-less HTTP endpoint: the request itself then tells whether it can be carried.
        capabilities = ctx.client_capabilities if ctx.era is not None else None
        missing = question.missing_capability(capabilities) if capabilities is not None else None
        if missing is not None:
            fallback = resolver_fall_back(plan.name, item, question, missing_reason(missing.name))
            if fallback is not None:
                return fallback
            error = missing_capability_error(question, capabilities, f"resolver {item.step.name!r}")
            if error is not None:
                raise error
        try:
            payload = await ctx.request_context.send_request(
                question.method, question.wire_params(modern=False), asking=item.key
            )
        except NoBackChannel as error:
            fallback = resolver_fall_back(plan.name, item, question, NO_BACK_CHANNEL)
            if fallback is not None:
                return fallback
            msg = (
                f"Resolver {item.step.name!r} needs to ask the client ({question.method}), but this "
                "connection cannot carry requests to the client; connect over stdio or a streaming "
                "HTTP session, or with protocol 2026-07-28"
            )
            raise ToolError(msg) from error
        answered[item.digest] = payload
        return payload

    return await plan.run(arguments, context_values(ctx), None, ask)


def seal_body_state(
    security: RequestStateSecurity, binding: CallBinding, result: InputRequiredResult
) -> InputRequiredResult:
    """Seal the state of a tool that drives its own rounds (returns `InputRequiredResult` itself)."""
    if result.request_state is None:
        return result
    token = seal_state(security, binding, BodyState(result.request_state).dump())
    return result.model_copy(update={"request_state": token})


async def open_body_state(
    security: RequestStateSecurity, token: str | None, binding: CallBinding
) -> str | None:
    """The tool's own state from last round (None on the first round)."""
    if token is None:
        return None
    inner = await open_state(security, token, binding)
    try:
        return BodyState.parse(inner).body
    except InvalidRequestState as error:
        raise invalid_state(error.reason) from None


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
            state = await open_body_state(
                security, request_state, target.binding(ctx, security, opening=True)
            )
        if input_responses is not None or state is not None:
            ctx = ctx.with_input(input_responses, state)  # pyright: ignore[reportArgumentType]
        value = await run_asking_inline(plan, arguments, ctx)
        if isinstance(value, InputRequiredResult):
            if not modern:
                msg = "returned an InputRequiredResult, which only protocol 2026-07-28 can carry"
                raise RuntimeError(msg)
            return Pending(seal_body_state(security, target.binding(ctx, security, opening=False), value))
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
        value = await run_asking_inline(plan, arguments, ctx)
    if isinstance(value, InputRequiredResult):
        msg = "returned an InputRequiredResult although its resolvers drive the rounds"
        raise RuntimeError(msg)
    return value
