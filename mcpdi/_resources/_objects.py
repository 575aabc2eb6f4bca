"""Resource objects (anything with `uri`, `name` and an async `read()`) as functions to register.

The reference SDK registers instances of its resource classes (`TextResource`,
`FileResource`, ...) with `add_resource`; a ported server keeps doing so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from mcpdi._options import ResourceOptions

__all__ = ("is_resource_object", "registrable", "resource_from_object")

_FIELDS = ("name", "title", "description", "mime_type", "icons", "annotations", "meta")


def is_resource_object(value: object) -> bool:
    return hasattr(value, "uri") and callable(getattr(value, "read", None))


def resource_from_object(
    resource: Any, options: ResourceOptions
) -> tuple[Callable[[], Awaitable[Any]], str, ResourceOptions]:
    """`resource`'s reader, URI and published fields; a field `options` sets wins over the object's."""
    fields = {
        key: given if (given := getattr(options, key)) is not None else getattr(resource, key, None)
        for key in _FIELDS
    }
    read: Callable[[], Awaitable[Any]] = resource.read

    async def read_object() -> Any:
        return await read()

    read_object.__name__ = str(fields["name"] or "resource")
    read_object.__doc__ = fields["description"]
    return read_object, str(resource.uri), dataclasses.replace(options, **fields)


def registrable(
    resource: Any, uri: str | None, options: ResourceOptions
) -> tuple[Callable[..., Any], str, ResourceOptions]:
    """What `add_resource(resource, uri, ...)` registers: a function and its URI, or an object's."""
    if uri is None and is_resource_object(resource):
        return resource_from_object(resource, options)
    if uri is None or not callable(resource):
        msg = (
            f"add_resource takes a function and its uri, or an object with .uri and an async .read(); "
            f"got {resource!r} with uri={uri!r}"
        )
        raise TypeError(msg)
    return resource, uri, options
