"""The reference interpreter: finishes a round after the first question, and the run-time helpers.

The generated code (`_codegen.py`) is a faster copy of this loop for the path on which nobody
asks; both must agree on values and on exceptions (`tests/engine/test_engine_properties.py`):

- a resolver's exception becomes `ResolverError(step=...)`, chained to the original;
- an adapter's exception passes unchanged: adapters are applied outside the resolver's `try`;
- a step whose `may_ask` is False is never checked for a question: its value is injected as is;
- a kept call-scoped value (`Answer.kept`) is used as is: its inputs' adapters do not run.

- consecutive offloaded sync resolvers (and a sync root after them) share one worker-thread
  call, a hop (`_offloaded.py`); a question ends the hop after the step that asked.

The generated code hands a round over at its first question, with what it has done (the
cleanup resolvers it entered; with a question from one of the concurrent resolvers it ran
together, the values of those after it). The interpreter alone decides what answers do: an
answer is shaped for each consumer as soon as it arrives, so a refusing adapter ends the
round before any other resolver runs or question is put; an answer counts for the same
question asked by another step; once a question is pending, the round goes on only through steps that may ask
(their questions are put in the same round) and stops at the first step that cannot ask, so
that step and everything after it wait for the answer, as they would when asking mid-call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextvars import copy_context
from types import MappingProxyType
from typing import Any

from mcpdi.engine._callables import identity_of
from mcpdi.engine._cleanup import Entered, RoundOutcome, close, close_shielded, enter, run_inline
from mcpdi.engine._errors import MissingArgument, ResolverError
from mcpdi.engine._offloaded import hop_from, joins_hop, offload_hop
from mcpdi.engine._plan import (
    ArgumentBinding,
    AskCallback,
    Binding,
    ContextBinding,
    Plan,
    ResolvedBinding,
    Step,
)
from mcpdi.engine._question import KEPT, Answer, Asked, NeedsInput, Question, digest_of
from mcpdi.engine._scopes import AppScope
from mcpdi.engine._together import batch_from, run_together


class Unset:
    """The value of a step that has not run (yet) this round."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = Unset()
ROOT = -1  # the key of the root's result among the values a hop returns


async def offload(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a sync callable on a worker thread."""
    from anyio import to_thread  # lazy: importing the engine must not import anyio

    return await to_thread.run_sync(fn, *args)


class Bail(Exception):
    """Raised by generated code when a resolver returned a question: `args[0]` is the step index."""


def resolver_error(step: Step, error: Exception) -> ResolverError:
    msg = (
        f"Resolver {step.name!r} (for parameter {step.first_consumer!r}) raised "
        f"{type(error).__name__}: {error}"
    )
    return ResolverError(msg, step=step, parameter=step.first_consumer)


def failed_step_error(steps: tuple[Step, ...], values: list[Any], error: Exception) -> ResolverError:
    """The generated code's error: steps run in order, so the failed one is the first without a value."""
    index = next(i for i, value in enumerate(values) if value is UNSET)
    return resolver_error(steps[index], error)


def missing_argument(plan_name: str, name: str) -> MissingArgument:
    msg = f"Call of {plan_name!r} lacks the argument {name!r}"
    return MissingArgument(msg, name=name)


def missing_context(plan_name: str, context_type: type) -> MissingArgument:
    msg = f"Call of {plan_name!r} lacks a context value for {context_type.__qualname__}"
    return MissingArgument(msg, name=context_type)


def consumers_of(plan: Plan, index: int) -> list[ResolvedBinding]:
    """The bindings fed by step `index`, in the order their consumers run (the root last)."""
    later = (b for s in plan.steps[index + 1 :] for b in s.bindings)
    return [
        b
        for b in (*later, *plan.bindings)
        if isinstance(b, ResolvedBinding) and b.edge.provider.index == index
    ]


class _Round:
    """The values of one round so far; an answered question's consumers get adapted values.

    The generated prologue has already checked the arguments and the context, so the round
    reads them without checking again.
    """

    def __init__(
        self,
        plan: Plan,
        arguments: Mapping[str, Any],
        context: Mapping[type, Any],
        values: list[Any],
    ) -> None:
        self.plan = plan
        self.arguments = arguments
        self.context = context
        self.values = values
        self.defaults = {a.name: a.default for a in plan.arguments if not a.required}
        self.delivered: dict[int, Any] = {}  # id(binding) -> the answered value, adapted for it
        self.entered: list[Entered] = []  # cleanup resolvers to close when the round ends
        self.kept: dict[str, Any] = {}  # call-scoped values by step key, for the next round

    def value_of(self, binding: Binding) -> Any:
        match binding:
            case ArgumentBinding():
                name = binding.argument
                if name in self.defaults:
                    return self.arguments.get(name, self.defaults[name])
                return self.arguments[name]
            case ContextBinding():
                if binding.optional:
                    return self.context.get(binding.context_type)
                return self.context[binding.context_type]
            case ResolvedBinding():
                delivered = self.delivered.get(id(binding), UNSET)
                if delivered is not UNSET:
                    return delivered
                value = self.values[binding.edge.provider.index]
                adapter = binding.adapter
                if adapter is not None and adapter.plain is not None:
                    return adapter.plain(value)
                return value

    def answered(self, index: int, value: Any) -> None:
        """Record an answered question's value and shape it for each consumer now.

        An adapter may refuse the answer (a declined confirmation); applying it at once ends the
        round before any other resolver runs or any other question is put.
        """
        self.values[index] = value
        for binding in consumers_of(self.plan, index):
            adapter = binding.adapter
            if adapter is not None and adapter.answered is not None:
                self.delivered[id(binding)] = adapter.answered(value)
            else:
                self.delivered[id(binding)] = value

    def arguments_of(self, bindings: tuple[Binding, ...]) -> tuple[list[Any], dict[str, Any]]:
        args = [self.value_of(b) for b in bindings if b.positional]
        kwargs = {b.parameter: self.value_of(b) for b in bindings if not b.positional}
        return args, kwargs


async def _invoke(
    fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], is_async: bool, inline: bool
) -> Any:
    if is_async:
        return await fn(*args, **kwargs)
    if inline:
        return fn(*args, **kwargs)
    return await offload(functools.partial(fn, *args, **kwargs))


async def resume(
    plan: Plan,
    collect: bool,
    arguments: Mapping[str, Any],
    context: Mapping[type, Any],
    answers: Mapping[str, Answer] | None,
    ask: AskCallback | None,
    start: int,
    values: list[Any],
    entered: list[Entered] | None = None,
    ready: Mapping[int, Any] | None = None,
) -> Any:
    """Continue the round from `start`; earlier steps are done, and `start`'s value is a
    question (handed over by the generated code) or unset (a round handed over whole).
    `entered`: the cleanup resolvers the generated code entered before, closed with the rest.
    `ready`: by index, the values of the concurrent steps after `start` that ran together
    with it, each taken in its turn as the round would take it (none runs again).

    Answered questions feed their consumers; pending ones block their dependents, and the
    round goes on collecting the questions of the steps that may ask up to the first step that
    cannot ask (a check or an effect): it runs only once every question before it in run order
    is answered, and the steps after it wait with it.
    Cleanup resolvers entered this round are closed when it ends, however it ends.
    """
    state = _Round(plan, arguments, context, values)
    if entered:
        state.entered = entered
    for step in plan.steps[:start]:  # the call-scoped values the generated code computed or kept
        if step.scope == "call":
            state.kept[step.key] = values[step.index]
    try:
        result = await _finish(state, collect, answers, ask, start, ready)
    except Exception as error:
        if state.entered:
            await close(state.entered, error, RoundOutcome.COMPLETED)
        raise
    except BaseException as error:  # cancelled: clean up all the same, shielded
        if state.entered:
            await close_shielded(state.entered, error)
        raise
    if state.entered:
        await close(
            state.entered,
            None,
            RoundOutcome.SUSPENDED if isinstance(result, NeedsInput) else RoundOutcome.COMPLETED,
        )
    return result


async def _finish(
    state: _Round,
    collect: bool,
    answers: Mapping[str, Answer] | None,
    ask: AskCallback | None,
    start: int,
    ran_together: Mapping[int, Any] | None,
) -> Any:
    plan, values = state.plan, state.values
    pending: list[Asked] = []
    blocked: set[int] = set()
    # An identical question is put once per call: an answer given to another step counts too.
    by_digest = {a.digest: a for a in answers.values()} if answers else {}
    # The values of concurrent steps that ran together with an earlier one (or of a hop's steps).
    ready: dict[int, Any] = dict(ran_together) if ran_together else {}
    for step in plan.steps[start:]:
        index = step.index
        if pending and not step.may_ask:
            break  # a check or an effect waits for the answers before it, and so does the rest
        value = values[index]
        if value is UNSET or index in ready:  # a hop has set the values it returns
            if any(edge.provider.index in blocked for edge in step.edges):
                blocked.add(index)
                continue
            if step.scope == "call":
                kept = answers.get(step.key) if answers else None
                if kept is not None and kept.digest == KEPT:
                    values[index] = state.kept[step.key] = kept.payload
                    continue
            if index in ready:
                value = ready.pop(index)
            elif step.concurrent and len(batch := _batch(plan, index, values, blocked, pending)) > 1:
                ready = await run_together(batch, state.arguments_of, resolver_error)
                value = ready.pop(index)
            elif joins_hop(step) and (hop := _hop(plan, index, values, blocked, bool(pending), collect)):
                ready = await offload_hop(_run_hop, state, *hop)
                value = ready.pop(index)
            else:
                args, kwargs = state.arguments_of(step.bindings)  # adapters: outside the try
                try:
                    if step.scope == "app":
                        value = await app_value(state.context[AppScope], step, args, kwargs)
                    else:
                        value, entered = await _compute(step, args, kwargs)
                        if entered is not None:
                            state.entered.append(entered)
                except Exception as error:
                    raise resolver_error(step, error) from error
            values[index] = value
            if step.scope == "call":
                state.kept[step.key] = value
            if not step.may_ask or not isinstance(value, Question):
                continue
        question: Question = value
        digest = digest_of(question)
        asked = Asked(step.key, question, digest, step)
        answer = answers.get(step.key) if answers else None
        if answer is None or answer.digest != digest:
            answer = by_digest.get(digest)
        if answer is None and ask is not None:
            answer = by_digest[digest] = Answer(digest, await ask(asked))
        if answer is not None:
            state.answered(index, question.resolve_answer(answer.payload))
        else:
            pending.append(asked)
            blocked.add(index)
    if pending:
        return NeedsInput(tuple(pending), MappingProxyType(state.kept))
    if collect:
        return {b.parameter: state.value_of(b) for b in plan.bindings}
    if ROOT in ready:
        return ready[ROOT]
    args, kwargs = state.arguments_of(plan.bindings)
    return await _invoke(plan.fn, args, kwargs, plan.is_async, plan.inline)


def _batch(plan: Plan, start: int, values: list[Any], blocked: set[int], pending: list[Asked]) -> list[Step]:
    return batch_from(plan.steps, start, values, blocked, UNSET, bool(pending))


def _hop(
    plan: Plan, start: int, values: list[Any], blocked: set[int], pending: bool, collect: bool
) -> tuple[list[Step], bool] | None:
    """The steps that share `start`'s hop, and whether the root joins it; None for a lone step.

    The root joins when the hop ends the plan in a round without pending questions: it would
    run on a worker thread right after, unless a step of the hop asks.
    """
    steps = hop_from(plan.steps, start, values, blocked, pending, UNSET)
    with_root = (
        not collect
        and not pending
        and not plan.is_async
        and not plan.inline
        and steps[-1].index == len(plan.steps) - 1
    )
    return (steps, with_root) if len(steps) > 1 or with_root else None


def _run_hop(
    check_cancelled: Callable[[], None], state: _Round, steps: list[Step], with_root: bool
) -> dict[int, Any]:
    """On a worker thread: the values of `steps` by index, up to the first question; with
    `with_root` and no question, the root's result too (at `ROOT`), its exceptions unchanged."""
    ready: dict[int, Any] = {}
    for step in steps:
        args, kwargs = state.arguments_of(step.bindings)  # adapters: outside the try
        if ready:
            check_cancelled()  # the first step's cancellation check is the thread hand-off's
        try:
            value = copy_context().run(step.fn, *args, **kwargs)
        except Exception as error:
            raise resolver_error(step, error) from error
        state.values[step.index] = ready[step.index] = value
        if step.may_ask and isinstance(value, Question):
            return ready
    if with_root:
        args, kwargs = state.arguments_of(state.plan.bindings)
        check_cancelled()
        ready[ROOT] = copy_context().run(state.plan.fn, *args, **kwargs)
    return ready


async def _compute(step: Step, args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, Entered | None]:
    if step.cleanup is not None:
        return await enter(step, args, kwargs, run_inline if step.inline else offload)
    return await _invoke(step.fn, args, kwargs, step.is_async, step.inline), None


async def app_value(scope: AppScope, step: Step, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """An app-scoped step's value: from the scope, or computed once (concurrent calls wait)."""
    key = identity_of(step.fn)
    value = scope.values.get(key, UNSET)
    if value is not UNSET:
        return value
    async with scope.lock_for(key):
        value = scope.values.get(key, UNSET)
        if value is UNSET:
            value, entered = await _compute(step, args, kwargs)
            scope.keep(key, step.fn, value, entered)
    return value
