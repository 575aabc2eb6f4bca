"""The typed boundary: whether what one side gives can be what the other side takes.

Registration refuses only a *clear* mismatch (`-> int` feeding a `str` parameter). Anything
the annotations cannot settle (`Any`, no annotation, type variables, protocols, abstract
classes, a broader class feeding a narrower one) passes, and may be checked at run time.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

from mcp_types import CreateMessageResult, CreateMessageResultWithTools, ListRootsResult

from mcpdi._annotations import is_union, strip_annotated
from mcpdi._asking import (
    OUTCOME_TYPES,
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    ListRoots,
    Sample,
    unaliased,
)

__all__ = ("Fit", "describe_type", "fit", "fit_any", "given_by_resolver", "outcome_data")

Fit = Literal["fits", "may_fit", "mismatch"]

_SAMPLE_RESULTS: tuple[type, ...] = (CreateMessageResult, CreateMessageResultWithTools)
_NUMERIC_TOWER: dict[type, tuple[type, ...]] = {float: (int,), complex: (int, float)}  # PEP 484


def _arms(annotation: Any) -> tuple[Any, ...]:
    bare = strip_annotated(annotation)
    if is_union(bare):
        return tuple(strip_annotated(a) for a in get_args(bare))
    return (bare,)


def _unknown(annotation: Any) -> bool:
    unannotated = annotation is inspect.Parameter.empty
    return unannotated or annotation in (Any, object) or isinstance(annotation, TypeVar)


def _anything(wanted: Any) -> bool:
    """A consumer that takes any value: unannotated, `Any` or `object`."""
    return wanted is inspect.Parameter.empty or wanted in (Any, object)


def _loose(cls: type) -> bool:
    """A class that unrelated classes may satisfy: a protocol or an abstract base class."""
    return bool(getattr(cls, "_is_protocol", False)) or inspect.isabstract(cls)


def _literal_values(annotation: Any) -> tuple[Any, ...] | None:
    return get_args(annotation) if get_origin(annotation) is Literal else None


def _class_of(annotation: Any) -> type | None:
    origin = get_origin(annotation) or annotation
    if origin is types.NoneType or annotation is None:
        return types.NoneType
    return origin if isinstance(origin, type) else None


def _fit_one(given: Any, wanted: Any) -> Fit:
    """One union arm `given` against a whole (possibly union) `wanted`."""
    if _anything(wanted) or given == wanted:
        return "fits"
    if _unknown(given) or _unknown(wanted):
        return "may_fit"
    wanted_arms = _arms(wanted)
    if len(wanted_arms) > 1:
        results = [_fit_one(given, arm) for arm in wanted_arms]
        if "fits" in results:
            return "fits"
        return "may_fit" if "may_fit" in results else "mismatch"
    wanted = strip_annotated(wanted)  # not a union: its one arm
    if _anything(wanted):
        return "fits"
    if _unknown(wanted):
        return "may_fit"
    given_values, wanted_values = _literal_values(given), _literal_values(wanted)
    if wanted_values is not None:
        if given_values is not None:
            if set(given_values) <= set(wanted_values):
                return "fits"
            return "may_fit" if set(given_values) & set(wanted_values) else "mismatch"
        return _may_be_a_literal(_class_of(given), wanted_values)
    if given_values is not None:
        return _combine([_fit_one(type(value), wanted) for value in given_values])
    given_class, wanted_class = _class_of(given), _class_of(wanted)
    if given_class is None or wanted_class is None:
        return "may_fit"  # NewType, ForwardRef, special forms: nothing to compare
    if given_class is wanted_class and get_args(given) and get_args(wanted):
        return "may_fit"  # same container, item types not compared (`list[int]` vs `list[str]`)
    return _fit_class(given_class, wanted_class)


def _fit_class(given: type, wanted: type) -> Fit:
    try:
        if issubclass(given, wanted) or given in _NUMERIC_TOWER.get(wanted, ()):
            return "fits"
        if issubclass(wanted, given) or _loose(given) or _loose(wanted):
            return "may_fit"
    except TypeError:  # a class whose issubclass() refuses (non-runtime protocols)
        return "may_fit"
    return "mismatch"


def _may_be_a_literal(given: type | None, values: tuple[Any, ...]) -> Fit:
    """A class feeding a `Literal[...]`: at best some of its values are allowed."""
    if given is None:
        return "may_fit"
    classes: set[type[Any]] = {type(v) for v in values}  # pyright: ignore[reportUnknownVariableType]
    related = (_fit_class(given, c) != "mismatch" or _fit_class(c, given) != "mismatch" for c in classes)
    return "may_fit" if any(related) else "mismatch"


def _combine(results: list[Fit]) -> Fit:
    """All fit: fits; none can: mismatch; otherwise may fit."""
    if results and all(r == "fits" for r in results):
        return "fits"
    return "mismatch" if results and all(r == "mismatch" for r in results) else "may_fit"


def fit(given: Any, wanted: Any) -> Fit:
    """Whether a value of type `given` is a `wanted`: every arm fits, some may, or none can."""
    if given is wanted and type(given) is type:  # the same plain class, the commonest pair
        return "fits"
    return _combine([_fit_one(arm, wanted) for arm in _arms(given)])


def fit_any(givens: tuple[Any, ...], wanted: Any) -> Fit:
    """`fit` of a value that may be of any of `givens`."""
    return _combine([fit(given, wanted) for given in givens])


def outcome_data(annotation: Any) -> Any:
    """The `T` of `ElicitationResult[T]` / `AcceptedElicitation[T]` (`Any` when not written)."""
    bare = unaliased(strip_annotated(annotation))
    for arm in _arms(bare) if is_union(bare) else (bare,):
        origin = get_origin(arm)
        if origin is ElicitationResult or origin is AcceptedElicitation:
            data: Any = get_args(arm)[0]
            return data
        # A parametrised pydantic model (`AcceptedElicitation[T]`) is a class of its own.
        metadata: Mapping[str, Any] = getattr(arm, "__pydantic_generic_metadata__", None) or {}
        if metadata.get("origin") is AcceptedElicitation:
            args: tuple[Any, ...] = metadata.get("args") or (Any,)
            return args[0]
    return Any


def given_by_resolver(returns: Any) -> tuple[Any, ...]:
    """What a consumer's data can be, from a resolver's return annotation.

    A question arm gives its answer (`Elicit[T]` gives `T`, `Sample` its result types,
    `ListRoots` a `ListRootsResult`); a returned outcome gives nothing to compare.
    """
    given: list[Any] = []
    for arm in _arms(returns):
        origin = get_origin(arm) or arm
        if isinstance(origin, type) and issubclass(origin, Elicit):
            args = get_args(arm)
            given.append(args[0] if args else Any)
        elif isinstance(origin, type) and issubclass(origin, Sample):
            given.extend(_SAMPLE_RESULTS)
        elif isinstance(origin, type) and issubclass(origin, ListRoots):
            given.append(ListRootsResult)
        elif isinstance(origin, type) and issubclass(origin, OUTCOME_TYPES):
            given.append(Any)
        else:
            given.append(arm)
    return tuple(given)


def describe_type(annotation: Any) -> str:
    """How an annotation reads in a message: `int`, `User | None`, `Elicit[User]`, `list[str]`."""
    if annotation is inspect.Parameter.empty:
        return "(unannotated)"
    bare = strip_annotated(annotation)
    if bare is None or bare is types.NoneType:
        return "None"
    if is_union(bare):
        return " | ".join(describe_type(arm) for arm in get_args(bare))
    if get_origin(bare) is Literal:
        return f"Literal[{', '.join(repr(v) for v in get_args(bare))}]"
    origin, args = get_origin(bare), get_args(bare)
    if origin is not None and args:
        head = getattr(origin, "__qualname__", None) or getattr(bare, "__name__", None) or repr(origin)
        return f"{head}[{', '.join(describe_type(a) for a in args)}]"
    if isinstance(bare, type):
        return bare.__qualname__
    return repr(bare).replace("typing.", "")
