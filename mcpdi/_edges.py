"""Registration-time decisions about resolvers: what each consumer receives, which questions are valid."""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, get_args, get_origin

from pydantic import PydanticSchemaGenerationError, TypeAdapter

from mcpdi._annotations import is_union, strip_annotated
from mcpdi._arguments import annotation_extras, header_marking
from mcpdi._asking import (
    OUTCOME_TYPES,
    AcceptedElicitation,
    AnswerRejected,
    Elicit,
    ElicitationResult,
    ListRoots,
    RejectedAnswer,
    Sample,
)
from mcpdi._elicit_schema import InvalidElicitationSchema, render_elicitation_schema
from mcpdi._errors import ElicitationRefused
from mcpdi.engine import Adapter, Edge, InvalidSignature, Plan, ResolvedBinding

__all__ = (
    "adapt_edge",
    "check_hidden_headers",
    "check_kept",
    "check_questions",
    "kept_adapter",
    "return_annotation",
)


def wants_outcome(annotation: Any) -> bool:
    """`ElicitationResult[T]`, one of its members, or a union of members: the consumer branches."""
    bare = strip_annotated(annotation)
    if bare is ElicitationResult or get_origin(bare) is ElicitationResult:
        return True
    if is_union(bare):
        arms = [a for a in get_args(bare) if a is not type(None)]
        return bool(arms) and all(wants_outcome(a) for a in arms)
    return isinstance(bare, type) and issubclass(bare, OUTCOME_TYPES)


def _check(resolver: str, value: Any) -> Any:
    if isinstance(value, RejectedAnswer):
        raise AnswerRejected(f"Resolver {resolver!r} {value.reason}")
    return value


def _as_outcome(value: Any) -> Any:
    if isinstance(value, OUTCOME_TYPES):
        return value
    return AcceptedElicitation[Any](data=value)


def _answered_outcome(resolver: str, value: Any) -> Any:
    return _as_outcome(_check(resolver, value))


def _unwrap(resolver: str, parameter: str, value: Any) -> Any:
    value = _check(resolver, value)
    if isinstance(value, AcceptedElicitation):
        return value.data  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(value, OUTCOME_TYPES):
        raise ElicitationRefused(parameter, str(value.action))  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    return value


def adapt_edge(edge: Edge) -> Adapter:
    """An outcome consumer gets every value as an outcome; any other consumer gets the data."""
    resolver = edge.provider.name
    if wants_outcome(edge.annotation):
        return Adapter(plain=_as_outcome, answered=partial(_answered_outcome, resolver))
    return Adapter(answered=partial(_unwrap, resolver, edge.parameter))


def return_annotation(fn: Callable[..., Any], localns: Mapping[str, Any] | None) -> Any:
    """The evaluated return annotation (`Any` when there is none or it cannot be read)."""
    target: Any = fn
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(type(fn), "__call__", fn)  # noqa: B004  # a callable instance's method
    try:
        hints = typing.get_type_hints(target, localns=dict(localns or {}), include_extras=True)
    except Exception:  # the engine reports unreadable hints; here they only inform the output shape
        return Any
    return hints.get("return", Any)


def _question_arms(annotation: Any) -> list[Any]:
    bare = strip_annotated(annotation)
    arms = get_args(bare) if is_union(bare) else (bare,)
    found: list[Any] = []
    for arm in arms:
        arm = strip_annotated(arm)
        origin = get_origin(arm) or arm
        if isinstance(origin, type) and issubclass(origin, (Elicit, Sample, ListRoots)):
            found.append(arm)
    return found


def check_questions(plan: Plan, localns: Mapping[str, Any] | None) -> None:
    """A resolver whose return annotation names questions: one at most, and a form-able model."""
    for step in plan.steps:
        arms = _question_arms(return_annotation(step.fn, localns))
        if len(arms) > 1:
            msg = (
                f"Resolver {step.name!r} ({step.location}) return annotation has several "
                "Elicit/Sample/ListRoots arms; a resolver asks one question - split it into "
                "separate resolvers"
            )
            raise InvalidSignature(msg, function=step.fn)
        for arm in arms:
            if get_origin(arm) is not Elicit:
                continue
            (model,) = get_args(arm)
            try:
                render_elicitation_schema(model)
            except InvalidElicitationSchema as error:
                msg = (
                    f"Resolver {step.name!r} ({step.location}) asks Elicit[{model.__qualname__}], but {error}"
                )
                raise InvalidSignature(msg, function=step.fn) from None


# How each call-scoped resolver's value is encoded into the sealed requestState and read back;
# the resolver is kept alive with its adapter, so that its id stays its own.
_KEPT_ADAPTERS: dict[int, tuple[Callable[..., Any], TypeAdapter[Any]]] = {}


def check_kept(plan: Plan, localns: Mapping[str, Any] | None) -> None:
    """A call-scoped value travels to later rounds inside the sealed `requestState`: pydantic
    must be able to encode and validate it by the resolver's return annotation."""
    for step in plan.steps:
        if step.scope != "call":
            continue
        annotation = return_annotation(step.fn, localns)
        if annotation is Any:
            msg = (
                f"Resolver {step.name!r} ({step.location}) is call-scoped but has no return "
                "annotation; its value is carried to later rounds as JSON, checked against that "
                "annotation. Annotate what it returns, e.g. `-> int`."
            )
            raise InvalidSignature(msg, function=step.fn)
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        except PydanticSchemaGenerationError:
            msg = (
                f"Resolver {step.name!r} ({step.location}) is call-scoped, but its return type "
                f"{getattr(annotation, '__qualname__', annotation)!s} cannot be carried to later rounds: "
                "pydantic has no schema for it. Return a model, dataclass or JSON-like value, or keep "
                "the default scope."
            )
            raise InvalidSignature(msg, function=step.fn) from None
        _KEPT_ADAPTERS[id(step.fn)] = (step.fn, adapter)


def kept_adapter(fn: Callable[..., Any]) -> TypeAdapter[Any]:
    """The adapter `check_kept` made for this call-scoped resolver at registration."""
    return _KEPT_ADAPTERS[id(fn)][1]


def check_hidden_headers(plan: Plan, kind: str, name: str, localns: Mapping[str, Any] | None) -> None:
    """A resolved or Context parameter is never sent by the client, so it cannot be a header."""
    hints: dict[str, Any] = {}
    with contextlib.suppress(Exception):  # the engine has already accepted or reported these hints
        hints = typing.get_type_hints(plan.fn, localns=dict(localns or {}), include_extras=True)
    for binding in (*plan.context_params, *plan.resolved_params):
        extras = annotation_extras(hints.get(binding.parameter))
        if isinstance(binding, ResolvedBinding):
            extras = (*extras, *binding.edge.metadata)
        marking = header_marking(extras)
        if marking is not None:
            msg = (
                f"{kind} {name!r} marks parameter {binding.parameter!r} with {marking}, but the "
                "parameter is filled on the server and never sent by the client; move the "
                "marking to a tool argument"
            )
            raise InvalidSignature(msg, function=plan.fn, parameter=binding.parameter)
