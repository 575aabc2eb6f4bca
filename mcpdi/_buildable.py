"""Which annotations pydantic is known to build and render later: what registration may defer.

A tool's argument and output models are built on its first list or call when every
annotation involved is of a shape that cannot fail to build or to render as JSON Schema and
cannot carry an `x-mcp-header` marking. Any other annotation is built at registration, so a
mistake in it is still raised by the decorator, before a client connects.
"""

from __future__ import annotations

import enum
import math
import types
import weakref
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaWarningKind

__all__ = ("StrictSchema", "builds_later", "json_plain")

_LEAVES: frozenset[Any] = frozenset({str, int, float, bool, bytes, type(None), None, Any})
_CONTAINERS: frozenset[Any] = frozenset({list, set, frozenset, tuple})
_KEYS: frozenset[Any] = frozenset({str, int})
_MAX_DEPTH = 8
_X_MCP_HEADER = "x-mcp-header"
# What a `Field(...)` in `Annotated[T, Field(...)]` may set and still be known to render: text.
_DESCRIBING = frozenset({"description", "title", "examples"})

# Per model class: whether it renders under `StrictSchema` without an `x-mcp-header` marking.
_MODELS: weakref.WeakKeyDictionary[type[BaseModel], bool] = weakref.WeakKeyDictionary()


class StrictSchema(GenerateJsonSchema):
    """A schema generator for which a part that cannot be rendered is an error, not a warning."""

    def emit_warning(self, kind: JsonSchemaWarningKind, detail: str) -> None:
        msg = f"{kind}: {detail}"
        raise ValueError(msg)


def json_plain(value: Any, depth: int = 0) -> bool:
    """Whether `value` is JSON as it is (a default pydantic writes into a schema unchanged)."""
    if value is None or isinstance(value, str | bool):
        return True
    if isinstance(value, int):
        return type(value) is int
    if isinstance(value, float):
        return type(value) is float and math.isfinite(value)
    if depth >= _MAX_DEPTH:
        return False
    if type(value) in (list, tuple):
        return all(json_plain(item, depth + 1) for item in cast("list[Any]", value))
    if type(value) is dict:
        items = cast("dict[Any, Any]", value).items()
        return all(type(key) is str and json_plain(item, depth + 1) for key, item in items)
    return False


def _describes_only(extra: Any) -> bool:
    """A `Field(description=..., title=..., examples=...)` with plain values and nothing else."""
    if not isinstance(extra, FieldInfo) or extra.metadata:  # constraints live in `metadata`
        return False
    chosen = cast("dict[str, Any]", extra._attributes_set)  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
    return chosen.keys() <= _DESCRIBING and all(json_plain(value) for value in chosen.values())


def _plain_enum(cls: type[enum.Enum]) -> bool:
    return all(json_plain(member.value) and not isinstance(member.value, list | dict) for member in cls)


def _model_renders(cls: type[BaseModel]) -> bool:
    known = _MODELS.get(cls)
    if known is None:
        known = False
        if cls.__pydantic_complete__:
            try:
                schema = cls.model_json_schema(schema_generator=StrictSchema)
            except Exception:  # whatever stops it rendering: built at registration
                schema = None
            known = schema is not None and _X_MCP_HEADER not in repr(schema)
        _MODELS[cls] = known
    return known


def builds_later(annotation: Any, depth: int = 0) -> bool:
    """Whether a model field of this annotation is known to build and render (see the module)."""
    try:
        if annotation in _LEAVES:
            return True
    except TypeError:  # an unhashable annotation is nothing this module knows
        return False
    if depth >= _MAX_DEPTH:
        return False
    origin = get_origin(annotation)
    if origin is None:
        if not isinstance(annotation, type):
            return False
        if annotation in _CONTAINERS or annotation is dict:
            return True
        if issubclass(annotation, enum.Enum):
            return _plain_enum(annotation)
        if issubclass(annotation, BaseModel):
            return _model_renders(annotation)
        return False
    arguments = get_args(annotation)
    if origin is Annotated:
        inner, *extras = arguments
        return all(_describes_only(extra) for extra in extras) and builds_later(inner, depth + 1)
    if origin is Literal:
        return all(value is None or type(value) in (str, int, bool) for value in arguments)
    if origin in (Union, types.UnionType):
        return all(builds_later(arm, depth + 1) for arm in arguments)
    if origin in _CONTAINERS:
        if origin is tuple and arguments[-1:] == (Ellipsis,):
            arguments = arguments[:-1]
        return all(builds_later(arm, depth + 1) for arm in arguments)
    if origin is dict:
        key, value = arguments
        return key in _KEYS and builds_later(value, depth + 1)
    return False
