"""The generic interpreter: finishes a round after the first question, and the run-time helpers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from mcpdi.engine._errors import MissingArgument, ResolverError
from mcpdi.engine._plan import AskCallback, Binding, Plan, Step
from mcpdi.engine._question import Answer, Asked, NeedsInput, Question, digest_of


class Unset:
    """The value of a step that has not run (yet) this round."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = Unset()


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


def read_arguments(plan: Plan, arguments: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for argument in plan.arguments:
        if argument.name in arguments:
            values[argument.name] = arguments[argument.name]
        elif argument.required:
            raise missing_argument(plan.name, argument.name)
        else:
            values[argument.name] = argument.default
    return values


class _Round:
    """The values of one round so far, and which of them came from answered questions."""

    def __init__(
        self, plan: Plan, arguments: Mapping[str, Any], context: Mapping[type, Any], values: list[Any]
    ):
        self.plan = plan
        self.arguments = read_arguments(plan, arguments)
        self.context = context
        self.values = values
        self.answered = [False] * len(values)

    def value_of(self, binding: Binding) -> Any:
        if binding.source == "argument":
            return self.arguments[binding.argument]
        if binding.source == "context":
            assert binding.context_type is not None
            if binding.optional:
                return self.context.get(binding.context_type)
            if binding.context_type not in self.context:
                raise missing_context(self.plan.name, binding.context_type)
            return self.context[binding.context_type]
        assert binding.edge is not None
        index = binding.edge.provider.index
        value = self.values[index]
        adapter = binding.adapter
        if adapter is not None:
            adapt = adapter.answered if self.answered[index] else adapter.plain
            if adapt is not None:
                value = adapt(value)
        return value

    async def call(
        self, fn: Callable[..., Any], bindings: tuple[Binding, ...], is_async: bool, inline: bool
    ) -> Any:
        args = [self.value_of(b) for b in bindings if b.positional]
        kwargs = {b.parameter: self.value_of(b) for b in bindings if not b.positional}
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
) -> Any:
    """Continue the round from `start`, whose value is a question; earlier steps are done.

    Answered questions feed their consumers; pending ones block only their dependents, so
    every question that can be asked this round is collected.
    """
    state = _Round(plan, arguments, context, values)
    pending: list[Asked] = []
    blocked: set[int] = set()
    for step in plan.steps[start:]:
        if step.index != start:
            if any(edge.provider.index in blocked for edge in step.edges):
                blocked.add(step.index)
                continue
            try:
                value = await state.call(step.fn, step.bindings, step.is_async, step.inline)
            except Exception as error:
                raise resolver_error(step, error) from error
        else:
            value = values[start]
        if isinstance(value, Question):
            digest = digest_of(value)
            asked = Asked(step.key, value, digest, step)
            answer = answers.get(step.key) if answers else None
            if answer is not None and answer.digest == digest:
                value = value.resolve_answer(answer.payload)
            elif ask is not None:
                value = value.resolve_answer(await ask(asked))
            else:
                pending.append(asked)
                blocked.add(step.index)
                continue
            state.answered[step.index] = True
        values[step.index] = value
    if pending:
        return NeedsInput(tuple(pending))
    if collect:
        return {b.parameter: state.value_of(b) for b in plan.bindings}
    return await state.call(plan.fn, plan.bindings, plan.is_async, plan.inline)
