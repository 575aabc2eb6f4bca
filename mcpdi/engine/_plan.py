"""The compiled, frozen plan: steps in run order, how each parameter gets its value."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Protocol

from mcpdi.engine._errors import UnansweredQuestion
from mcpdi.engine._question import Answer, Asked, NeedsInput
from mcpdi.engine._records import built_fast

# How a cleanup resolver gives its value and cleans up: a (async) generator function, or a
# factory of (async) context managers (`@contextmanager`, `@asynccontextmanager`).
Cleanup = Literal["generator", "async_generator", "context_manager", "async_context_manager"]
AskCallback = Callable[[Asked], Awaitable[Any]]
EMPTY_CONTEXT: Mapping[type, Any] = MappingProxyType({})
EMPTY_HINTS: Mapping[str, Any] = MappingProxyType({})


class RunFunction(Protocol):
    """`plan.run` / `plan.resolve`: one round of a call."""

    def __call__(
        self,
        arguments: Mapping[str, Any],
        context: Mapping[type, Any] = ...,
        answers: Mapping[str, Answer] | None = ...,
        ask: AskCallback | None = ...,
    ) -> Awaitable[Any]: ...


@built_fast
@dataclass(frozen=True, slots=True)
class Adapter:
    """Decided by the host per consumer edge: how a value is shaped on its way to the consumer.

    `plain` applies to a value a resolver returned, `answered` to the value of an answered
    question. Exceptions they raise propagate unchanged.
    """

    plain: Callable[[Any], Any] | None = None
    answered: Callable[[Any], Any] | None = None


@built_fast
@dataclass(frozen=True, slots=True)
class Argument:
    """A root parameter that is a call argument: the host builds its schema from these."""

    name: str
    annotation: Any  # with Annotated extras; inspect.Parameter.empty when unannotated
    default: Any  # inspect.Parameter.empty when required
    kind: inspect._ParameterKind  # pyright: ignore[reportPrivateUsage]  # the stdlib's own enum

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty


@built_fast
@dataclass(frozen=True, slots=True)
class Edge:
    """A resolved parameter: `consumer`'s parameter is filled by `provider`."""

    consumer: str  # display name of the consuming resolver or of the root
    consumer_key: str | None  # the consuming step's key; None for the root
    parameter: str
    annotation: Any  # T of Annotated[T, Resolve(fn)]
    metadata: tuple[Any, ...]  # the other Annotated extras, in order
    provider: Step
    validate: bool = False  # Resolve(fn, validate=True): the host checks the provider's values


@built_fast
@dataclass(frozen=True, slots=True)
class ArgumentBinding:
    """A parameter filled from a call argument."""

    parameter: str
    positional: bool  # passed by position (positional-only and positional-or-keyword parameters)
    argument: str  # the call argument's name
    source: ClassVar[Literal["argument"]] = "argument"


@built_fast
@dataclass(frozen=True, slots=True)
class ContextBinding:
    """A parameter filled from the context mapping, by its declared type."""

    parameter: str
    positional: bool
    context_type: type
    optional: bool  # None when the context lacks it
    source: ClassVar[Literal["context"]] = "context"


@built_fast
@dataclass(frozen=True, slots=True)
class ResolvedBinding:
    """A parameter filled by a resolver, through the host's adapter for this edge (if any)."""

    parameter: str
    positional: bool
    edge: Edge
    adapter: Adapter | None
    source: ClassVar[Literal["resolved"]] = "resolved"


Binding = ArgumentBinding | ContextBinding | ResolvedBinding
"""How one parameter of a resolver or of the root gets its value: match on the class."""


@built_fast
@dataclass(frozen=True, slots=True)
class Step:
    """One resolver in the plan; `index` is its position in `Plan.steps`."""

    index: int
    key: str  # opaque, stable wire key: hides module and function names
    name: str  # display name
    qualname: str  # module:qualname
    location: str  # file:line
    fn: Callable[..., Any] = field(repr=False)
    is_async: bool
    inline: bool
    bindings: tuple[Binding, ...] = field(repr=False)
    first_consumer: str  # the parameter through which the step was first reached
    # False when the return annotation names a class outside the Question family. Such a step
    # never runs while a question before it in run order waits for its answer: a round that
    # has a pending question stops at it, so a refused question prevents its effects.
    may_ask: bool = True
    # The type hints as compile read them, and what the step gives: its return hint, or a class.
    hints: Mapping[str, Any] = field(default_factory=lambda: EMPTY_HINTS, repr=False, compare=False)
    returns: Any = field(default=Any, repr=False, compare=False)
    cleanup: Cleanup | None = None  # a cleanup resolver: entered, and closed when the round ends
    scope: Literal["round", "call", "app"] = "round"  # see `Resolve`; "app" values never ask
    concurrent: bool = False  # async, and runs together with the independent concurrent steps next to it

    @property
    def edges(self) -> tuple[Edge, ...]:
        return tuple(b.edge for b in self.bindings if isinstance(b, ResolvedBinding))


@built_fast
@dataclass(frozen=True, slots=True)
class Plan:
    """A compiled function: run it with `await plan.run(arguments, context, answers, ask)`.

    `run` returns the root's result, or a `NeedsInput` when questions are pending (the root did
    not run). `resolve` is the same round but returns the root's parameter values by name
    instead of calling it. Both run generated straight-line code, generated on the first run.
    """

    name: str
    fn: Callable[..., Any]
    is_async: bool
    inline: bool
    location: str
    arguments: tuple[Argument, ...]
    context_params: tuple[ContextBinding, ...]
    resolved_params: tuple[ResolvedBinding, ...]
    bindings: tuple[Binding, ...]
    steps: tuple[Step, ...]
    run: RunFunction = field(repr=False, compare=False)
    resolve: RunFunction = field(repr=False, compare=False)
    _namespace: dict[str, Any] = field(repr=False, compare=False)  # of `run`: its code, once generated
    # The root's type hints as compile read them (hosts read these instead of the signature again).
    hints: Mapping[str, Any] = field(default_factory=lambda: EMPTY_HINTS, repr=False, compare=False)

    @property
    def source(self) -> str:
        """The generated run code, for reading and debugging (generated now if not run yet)."""
        namespace = self._namespace  # holds what generates the code into it, and then the code
        namespace["_generate_run"](namespace["_PLAN"])
        return namespace["_SOURCE"]

    async def call(
        self,
        arguments: Mapping[str, Any],
        context: Mapping[type, Any] = EMPTY_CONTEXT,
        answers: Mapping[str, Answer] | None = None,
    ) -> Any:
        """Run for hosts that cannot ask (a task queue): a pending question raises."""
        result = await self.run(arguments, context, answers)
        if isinstance(result, NeedsInput):
            names = ", ".join(f"{a.step.name!r} ({a.key})" for a in result.questions)
            msg = (
                f"Call of {self.name!r} needs answers from {names}; "
                "use plan.run(...) and answer the returned NeedsInput, or pass ask=..."
            )
            raise UnansweredQuestion(msg, questions=result.questions)
        return result
