"""Reading type annotations at registration: `Annotated` layers stripped, unions recognised."""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

__all__ = ("is_union", "strip_annotated")


def strip_annotated(annotation: Any) -> Any:
    """The annotation under any `Annotated[...]` layers."""
    if type(annotation) is type:  # a plain class, the most common annotation: no layers
        return annotation
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def is_union(annotation: Any) -> bool:
    """Whether the annotation is a union (`A | B` or `Union[A, B]`)."""
    return type(annotation) is not type and get_origin(annotation) in (Union, types.UnionType)
