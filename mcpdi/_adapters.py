"""What each consumer of a resolver receives: the data or the whole outcome, checked on request."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from functools import partial
from typing import Any, get_args, get_origin

from pydantic import ConfigDict, PydanticUserError, TypeAdapter, ValidationError

from mcpdi._annotations import is_union, strip_annotated
from mcpdi._asking import (
    OUTCOME_TYPES,
    AcceptedElicitation,
    AnswerRejected,
    ElicitationResult,
    RejectedAnswer,
    unaliased,
)
from mcpdi._boundary import describe_type, outcome_data
from mcpdi._errors import ElicitationRefused
from mcpdi.engine import Adapter, Edge, InvalidSignature

__all__ = ("InvalidResolverResult", "adapt_edge", "strict_checker", "wants_outcome")

logger = logging.getLogger("mcpdi")

_ARBITRARY = ConfigDict(arbitrary_types_allowed=True)


class InvalidResolverResult(TypeError):
    """A resolver checked with `validate=True` returned a value its consumer's annotation refuses.

    The server's fault, not the client's: logged, and the client only learns that the call failed.
    """


def wants_outcome(annotation: Any) -> bool:
    """`ElicitationResult[T]`, one of its members, or a union of members: the consumer branches."""
    if type(annotation) is type:  # a plain class, the commonest annotation: no alias, no union
        return issubclass(annotation, OUTCOME_TYPES)
    bare = unaliased(strip_annotated(annotation))
    if bare is ElicitationResult or get_origin(bare) is ElicitationResult:
        return True
    if is_union(bare):
        arms = [a for a in get_args(bare) if a is not type(None)]
        return bool(arms) and all(wants_outcome(a) for a in arms)
    return isinstance(bare, type) and issubclass(bare, OUTCOME_TYPES)


def strict_checker(annotation: Any) -> TypeAdapter[Any] | None:
    """A strict pydantic validator of `annotation` (classes it does not know: by isinstance).

    None when pydantic cannot build one (a checker is then impossible, not skipped silently:
    callers decide).
    """
    try:
        return TypeAdapter(annotation, config=_ARBITRARY)
    except PydanticUserError:  # models, dataclasses and TypedDicts carry their own config
        pass
    except Exception:  # pydantic raises several kinds for types it cannot handle
        return None
    try:
        return TypeAdapter(annotation)
    except Exception:
        return None


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


class _Unwrap:
    """The data of an answer for `parameter` (a refusal raises): one small object per edge,
    lighter than a `partial` of the same two strings, as every tool keeps one per edge."""

    __slots__ = ("parameter", "resolver")

    def __init__(self, resolver: str, parameter: str) -> None:
        self.resolver = resolver
        self.parameter = parameter

    def __call__(self, value: Any) -> Any:
        value = _check(self.resolver, value)
        if isinstance(value, AcceptedElicitation):
            return value.data  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(value, OUTCOME_TYPES):
            raise ElicitationRefused(self.parameter, str(value.action))  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        return value


def _validated(checker: TypeAdapter[Any], where: str, wanted: str, value: Any) -> Any:
    if isinstance(value, OUTCOME_TYPES):
        return value  # a resolver may hand over an outcome itself; its data was checked when answered
    try:
        validated = checker.validate_python(value, strict=True)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]["msg"] if error.error_count() else str(error)
        msg = f"{where} returned {type(value).__qualname__}, but the parameter takes {wanted}: {problem}"
        raise InvalidResolverResult(msg) from None
    # Strict validation converts only a dict into the model it describes: hand over that model.
    # A value of the right type is handed over as itself (no copy).
    return validated if type(validated) is not type(value) else value


def _then(first: Callable[[Any], Any], second: Callable[[Any], Any], value: Any) -> Any:
    return second(first(value))


def _result_check(edge: Edge, data: Any) -> Callable[[Any], Any]:
    checker = strict_checker(data)
    where = (
        f"Resolver {edge.provider.name!r} ({edge.provider.location}) feeding parameter "
        f"{edge.parameter!r} of {edge.consumer!r}"
    )
    if checker is None:
        msg = (
            f"{where} is to be validated, but pydantic cannot check {describe_type(data)}; "
            "annotate the parameter with a type pydantic can validate, or drop validate=True"
        )
        raise InvalidSignature(msg, function=edge.provider.fn, parameter=edge.parameter)
    return partial(_validated, checker, where, describe_type(data))


def adapt_edge(edge: Edge, *, validate_all: bool = False) -> Adapter:
    """An outcome consumer gets every value as an outcome; any other consumer gets the data.

    With `Resolve(fn, validate=True)` (or the server's `validate_resolvers=True`), a value the
    resolver returned is checked against the consumer's annotation before it is handed over.
    """
    resolver = edge.provider.name
    outcome = wants_outcome(edge.annotation)
    data = outcome_data(edge.annotation) if outcome else edge.annotation
    check = _result_check(edge, data) if (edge.validate or validate_all) else None
    if outcome:
        plain: Callable[[Any], Any] = _as_outcome if check is None else partial(_then, check, _as_outcome)
        return Adapter(plain=plain, answered=partial(_answered_outcome, resolver))
    if check is None:
        return _data_adapter(resolver, edge.parameter)
    return Adapter(plain=check, answered=_Unwrap(resolver, edge.parameter))


@functools.lru_cache(maxsize=1024)
def _data_adapter(resolver: str, parameter: str) -> Adapter:
    """The adapter of an unchecked data edge, one per resolver and parameter name: a resolver
    fed to the same parameter of many tools and resolvers lends them all the same object."""
    return Adapter(plain=None, answered=_Unwrap(resolver, parameter))
