"""Registration checks of a compiled plan: questions, hidden headers and the typed boundary.

Everything is read from what the engine already read (`Plan.hints`, `Step.hints`,
`Step.returns`, `Edge.annotation`): no signature is inspected twice.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel, PydanticSchemaGenerationError, TypeAdapter, ValidationError

from mcpdi._adapters import strict_checker, wants_outcome
from mcpdi._annotations import is_union, strip_annotated
from mcpdi._arguments import annotation_extras, header_marking
from mcpdi._asking import Elicit, ListRoots, Sample
from mcpdi._boundary import describe_type, fit, fit_any, given_by_resolver, outcome_data
from mcpdi._elicit_schema import InvalidElicitationSchema, render_elicitation_schema
from mcpdi._errors import ToolError
from mcpdi.engine import ArgumentBinding, Edge, InvalidSignature, Plan, ResolvedBinding, Step

__all__ = (
    "ArgumentCheck",
    "check_arguments",
    "check_boundaries",
    "check_hidden_headers",
    "check_kept",
    "check_questions",
    "kept_adapter",
)


def _question_arms(annotation: Any) -> list[Any]:
    if type(annotation) is type:  # a plain class, the commonest return: one arm, itself
        return [annotation] if issubclass(annotation, (Elicit, Sample, ListRoots)) else []
    bare = strip_annotated(annotation)
    arms = get_args(bare) if is_union(bare) else (bare,)
    found: list[Any] = []
    for arm in arms:
        arm = strip_annotated(arm)
        origin = get_origin(arm) or arm
        if isinstance(origin, type) and issubclass(origin, (Elicit, Sample, ListRoots)):
            found.append(arm)
    return found


def _first_line(error: Exception) -> str:
    return next(iter(str(error).splitlines()), type(error).__name__)


def _check_elicited_model(step: Step, arm: Any) -> None:
    (model,) = get_args(arm)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        msg = (
            f"Resolver {step.name!r} ({step.location}) asks Elicit[{describe_type(model)}], but a form "
            "is described by a pydantic model; write Elicit[M] with M a BaseModel subclass of flat fields"
        )
        raise InvalidSignature(msg, function=step.fn)
    if model is BaseModel:  # a form built when the resolver runs (`create_model`): checked then
        return
    try:
        render_elicitation_schema(model)
    except InvalidElicitationSchema as error:
        msg = f"Resolver {step.name!r} ({step.location}) asks Elicit[{model.__qualname__}], but {error}"
        raise InvalidSignature(msg, function=step.fn) from None
    except Exception as error:  # pydantic's schema errors (undefined fields, ...)
        msg = (
            f"Resolver {step.name!r} ({step.location}) asks Elicit[{model.__qualname__}], but its "
            f"JSON schema cannot be built ({type(error).__name__}: {_first_line(error)}); "
            "define every field's type"
        )
        raise InvalidSignature(msg, function=step.fn) from None


def check_questions(plan: Plan) -> None:
    """A resolver whose return annotation names questions: one at most, and a form-able model."""
    for step in plan.steps:
        arms = _question_arms(step.returns)
        if len(arms) > 1:
            msg = (
                f"Resolver {step.name!r} ({step.location}) return annotation has several "
                "Elicit/Sample/ListRoots arms; a resolver asks one question - split it into "
                "separate resolvers"
            )
            raise InvalidSignature(msg, function=step.fn)
        for arm in arms:
            if get_origin(arm) is Elicit:
                _check_elicited_model(step, arm)


# How each call-scoped resolver's value is encoded into the sealed requestState and read back;
# the resolver is kept alive with its adapter, so that its id stays its own.
_KEPT_ADAPTERS: dict[int, tuple[Any, TypeAdapter[Any]]] = {}


def check_kept(plan: Plan) -> None:
    """A call-scoped value travels to later rounds inside the sealed `requestState`: pydantic
    must be able to encode and validate it by the resolver's return annotation."""
    for step in plan.steps:
        if step.scope != "call":
            continue
        annotation = step.returns
        if annotation is Any:
            msg = (
                f"Resolver {step.name!r} ({step.location}) is call-scoped but has no return "
                "annotation; its value is carried to later rounds as JSON, checked against that "
                "annotation. Annotate what it returns, e.g. `-> int`."
            )
            raise InvalidSignature(msg, function=step.fn)
        if annotation is object:  # pydantic takes any value for it, and no JSON can carry any value
            msg = (
                f"Resolver {step.name!r} ({step.location}) is call-scoped but returns `object`; its "
                "value is carried to later rounds as JSON, checked against the return annotation, "
                "and `object` can be anything. Annotate what it returns, e.g. `-> int`."
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


def kept_adapter(fn: Any) -> TypeAdapter[Any]:
    """The adapter `check_kept` made for this call-scoped resolver at registration."""
    return _KEPT_ADAPTERS[id(fn)][1]


def check_hidden_headers(plan: Plan, kind: str, name: str) -> None:
    """A resolved or Context parameter is never sent by the client, so it cannot be a header."""
    for binding in (*plan.context_params, *plan.resolved_params):
        extras = annotation_extras(plan.hints.get(binding.parameter))
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


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    """A call argument a resolver takes by name with a narrower annotation than the root's."""

    argument: str
    resolver: str
    wanted: str  # the resolver parameter's annotation, as a message shows it
    checker: TypeAdapter[Any]


def _consumer_location(plan: Plan, edge: Edge) -> str:
    if edge.consumer_key is None:
        return plan.location
    return next(step.location for step in plan.steps if step.key == edge.consumer_key)


# A resolver returning one of these into a parameter of that very type always fits: the
# boundary analysis is skipped for the commonest edge of all.
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, bytes})


def _check_edge(plan: Plan, edge: Edge) -> None:
    provider = edge.provider
    if provider.returns is edge.annotation and type(edge.annotation) is type and edge.annotation in _SCALARS:
        return
    outcome = wants_outcome(edge.annotation)
    wanted = outcome_data(edge.annotation) if outcome else edge.annotation
    if fit_any(given_by_resolver(provider.returns), wanted) != "mismatch":
        return
    takes = describe_type(edge.annotation)
    msg = (
        f"Resolver {provider.name!r} ({provider.location}) returns {describe_type(provider.returns)}, "
        f"but parameter {edge.parameter!r} of {edge.consumer!r} ({_consumer_location(plan, edge)}) "
        f"takes {takes}; make the resolver return {describe_type(wanted)}, or annotate the parameter "
        "with what the resolver returns"
    )
    raise InvalidSignature(msg, function=provider.fn, parameter=edge.parameter)


def _check_argument(plan: Plan, step: Step, binding: ArgumentBinding, declared: Any) -> ArgumentCheck | None:
    wanted = step.hints.get(binding.parameter, inspect.Parameter.empty)
    verdict = fit(declared, wanted)
    if verdict == "fits":
        return None
    if verdict == "mismatch":
        msg = (
            f"Resolver {step.name!r} ({step.location}) takes argument {binding.argument!r} as "
            f"{describe_type(wanted)}, but {plan.name!r} ({plan.location}) declares it as "
            f"{describe_type(declared)}; give both the same type (the resolver receives the value "
            "the call argument was validated to)"
        )
        raise InvalidSignature(msg, function=step.fn, parameter=binding.parameter)
    checker = strict_checker(wanted)
    if checker is None:
        return None  # a type pydantic cannot check: nothing registration could promise either way
    return ArgumentCheck(binding.argument, step.name, describe_type(wanted), checker)


def check_boundaries(plan: Plan) -> tuple[ArgumentCheck, ...]:
    """Refuse clear type mismatches between resolvers and their consumers.

    Returns the checks a call must run: arguments a resolver takes with a narrower type than
    the root declares (`str | None` into `str`), validated per call before any resolver runs.
    """
    declared = {argument.name: argument.annotation for argument in plan.arguments}
    checks: list[ArgumentCheck] = []
    for binding in plan.resolved_params:
        _check_edge(plan, binding.edge)
    for step in plan.steps:
        for binding in step.bindings:
            if isinstance(binding, ResolvedBinding):
                _check_edge(plan, binding.edge)
            elif isinstance(binding, ArgumentBinding) and binding.argument in declared:
                check = _check_argument(plan, step, binding, declared[binding.argument])
                if check is not None:
                    checks.append(check)
    return tuple(checks)


def check_arguments(checks: tuple[ArgumentCheck, ...], arguments: Mapping[str, Any]) -> None:
    """Raise a model-readable `ToolError` when an argument does not fit a resolver that takes it."""
    for check in checks:
        if check.argument not in arguments:
            continue
        value = arguments[check.argument]
        try:
            check.checker.validate_python(value, strict=True)
        except ValidationError as error:
            problem = error.errors(include_url=False)[0]["msg"] if error.error_count() else str(error)
            msg = (
                f"argument {check.argument!r} must be {check.wanted} here (resolver {check.resolver!r} "
                f"takes it), got {value!r}: {problem}"
            )
            raise ToolError(msg) from None
