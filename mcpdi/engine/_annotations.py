"""Reading one parameter's annotation: its `Resolve` marker, a context type, misplaced markers."""

from __future__ import annotations

import types
import typing
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from mcpdi.engine._records import built_fast
from mcpdi.engine._resolve import Resolve

ANNOTATED_ALIAS: Any = type(Annotated[int, "x"])  # the class of every `Annotated[...]`


def annotated_class(hint: object) -> type | None:
    """T of `Annotated[T, ...]` when T is a plain class, the commonest marked annotation: no
    marker can hide below its top level, and its extras are its own (`__metadata__`)."""
    if type(hint) is not ANNOTATED_ALIAS:
        return None
    inner = typing.cast("Any", hint).__origin__
    return inner if type(inner) is type else None


@built_fast
@dataclass(frozen=True, slots=True)
class Marked:
    """A top-level `Annotated[T, ..., Resolve(fn), ...]`."""

    annotation: Any  # T
    metadata: tuple[Any, ...]  # the other extras
    markers: tuple[Resolve, ...]


def _is_union(tp: object) -> bool:
    return type(tp) is not type and get_origin(tp) in (Union, types.UnionType)


def top_level_markers(hint: object) -> Marked | None:
    if type(hint) is type or get_origin(hint) is not Annotated:  # a plain class first: the most common
        return None
    return marked_by(get_args(hint)[0], getattr(hint, "__metadata__", ()))


def marked_by(annotation: Any, metadata: tuple[Any, ...]) -> Marked | None:
    """`Annotated[annotation, *metadata]` split into its `Resolve` markers and the other extras;
    None without a marker."""
    markers: list[Resolve] = []
    others: list[Any] = []
    for extra in metadata:  # a loop, not two comprehensions: most annotations have one extra
        if isinstance(extra, Resolve):
            markers.append(extra)
        else:
            others.append(extra)
    if not markers:
        return None
    return Marked(annotation=annotation, metadata=tuple(others), markers=tuple(markers))


def misplaced_marker(hint: object) -> str | None:
    """Where a `Resolve` hides below the top level: "union", or the container's name (`list[...]`)."""
    inner = get_args(hint)[0] if get_origin(hint) is Annotated else hint
    return _search(inner, parent=None)


def _search(tp: object, parent: object) -> str | None:
    if type(tp) is type:  # a plain class holds no marker
        return None
    if get_origin(tp) is Annotated:
        if any(isinstance(m, Resolve) for m in getattr(tp, "__metadata__", ())):
            if parent is None or _is_union(parent):
                return "union"
            origin = get_origin(parent)
            name = getattr(origin, "__name__", None) or str(origin)
            return f"{name}[...]"
        tp = get_args(tp)[0]
    if isinstance(tp, str | bytes | int | bool | types.NoneType):
        return None
    for arg in get_args(tp):
        if isinstance(arg, list | tuple):  # Callable[[A, B], R] nests its parameters in a list
            for item in typing.cast("list[object] | tuple[object, ...]", arg):
                found = _search(item, tp)
                if found:
                    return found
        else:
            found = _search(arg, tp)
            if found:
                return found
    return None


def context_type_of(hint: object, context_types: Collection[type]) -> tuple[type, bool] | None:
    """The declared context type `hint` names (or subclasses), and whether None is allowed."""
    if not context_types:
        return None
    if type(hint) is type:  # a plain class: no layers to look under (a loop: no generator per call)
        for declared in context_types:
            if issubclass(hint, declared):
                return declared, False
        return None
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    optional = False
    if _is_union(hint):
        arms = [a for a in get_args(hint) if a is not types.NoneType]
        if len(arms) != 1:
            return None
        optional = len(arms) < len(get_args(hint))
        hint = arms[0]
        if get_origin(hint) is Annotated:
            hint = get_args(hint)[0]
    origin = get_origin(hint) or hint
    if not isinstance(origin, type):
        return None
    for declared in context_types:
        if issubclass(origin, declared):
            return declared, optional
    return None
