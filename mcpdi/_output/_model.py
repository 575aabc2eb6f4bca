"""Which type a tool's structured output is validated against, read from its return annotation.

The rules are the ones clients of the reference server already see: models and TypedDicts
are published as they are, `dict[str, T]` as a bare object, other annotated classes
(dataclasses, plain classes with annotations) as a model of their fields, and everything
else wrapped as `{"result": value}`.
"""

from __future__ import annotations

import sys
import typing
from dataclasses import dataclass
from typing import Annotated, Any, cast, get_args, get_origin, get_type_hints

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, create_model
from typing_extensions import is_typeddict

from mcpdi._annotations import strip_annotated

__all__ = ("OutputModel", "choose_output_model")

_PRIMITIVES: tuple[Any, ...] = (str, int, float, bool, bytes, type(None))
_MISSING = object()


@dataclass(frozen=True, slots=True)
class OutputModel:
    """The type structured output is validated against, and whether values are wrapped in `result`."""

    model: Any
    wrap: bool


def _wrapped(function_name: str, annotation: Any) -> OutputModel:
    return OutputModel(create_model(f"{function_name}Output", result=annotation), wrap=True)


def _model_of_class(cls: type[Any], hints: dict[str, Any]) -> type[BaseModel]:
    """A model with the class's annotated fields, read from instances by attribute."""
    fields: dict[str, Any] = {}
    for field, hint in hints.items():
        if field.startswith("_"):
            continue
        default = getattr(cls, field, _MISSING)
        fields[field] = hint if default is _MISSING else (hint, default)
    return create_model(cls.__name__, __config__=ConfigDict(from_attributes=True), **fields)


def choose_output_model(function_name: str, annotation: Any) -> OutputModel | None:
    """The output model for a return annotation; None when the type carries no structured data."""
    bare = strip_annotated(annotation)
    if bare is None or bare in _PRIMITIVES:
        return _wrapped(function_name, annotation)
    if get_origin(bare) is dict:
        if get_args(bare)[:1] == (str,):
            return OutputModel(Annotated[bare, Field(title=f"{function_name}DictOutput")], wrap=False)
        return _wrapped(function_name, annotation)
    if not isinstance(bare, type) or get_origin(bare) is not None:
        return _wrapped(function_name, annotation)  # list[...], unions, Literal, ...
    cls = cast("type[Any]", bare)
    if issubclass(cls, BaseModel):
        return OutputModel(cls, wrap=False)
    if is_typeddict(cls):
        return OutputModel(readable_typeddict(cls), wrap=False)
    hints = get_type_hints(cls)
    if not hints:
        return None  # a class without annotated fields (or `Any`): nothing to publish
    return OutputModel(_model_of_class(cls, hints), wrap=False)


_QUALIFIERS = (typing.Required, typing.NotRequired, typing_extensions.Required, typing_extensions.NotRequired)


def readable_typeddict(td: type[Any]) -> type[Any]:
    """`td` as pydantic can read it: below Python 3.12 pydantic refuses a `typing.TypedDict`.

    The class is rebuilt with the same keys, requiredness, name and docstring as a
    `typing_extensions.TypedDict`, so an author never has to know.
    """
    if sys.version_info >= (3, 12) or type(td).__module__ != "typing":
        return td
    items: dict[str, Any] = {}
    for key, hint in get_type_hints(td, include_extras=True).items():
        while get_origin(hint) in _QUALIFIERS:
            hint = get_args(hint)[0]
        required = key in td.__required_keys__  # pyright: ignore[reportAttributeAccessIssue]
        items[key] = typing_extensions.Required[hint] if required else typing_extensions.NotRequired[hint]
    rebuilt: type[Any] = typing_extensions.TypedDict(td.__name__, items)  # pyright: ignore[reportArgumentType, reportAssignmentType, reportCallIssue]
    for attribute in ("__doc__", "__module__", "__qualname__", "__pydantic_config__"):
        if hasattr(td, attribute):
            setattr(rebuilt, attribute, getattr(td, attribute))
    return rebuilt
