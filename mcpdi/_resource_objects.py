"""Resource objects (anything with `uri`, `name` and an async `read()`) as functions to register.

The reference SDK registers instances of its resource classes (`TextResource`,
`FileResource`, ...) with `add_resource`; a ported server keeps doing so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("ObjectResource", "is_resource_object", "resource_from_object")

_FIELDS = ("name", "title", "description", "mime_type", "icons", "annotations", "meta")


@dataclass(frozen=True, slots=True)
class ObjectResource:
    """A resource object as `MCPServer` registers it: a reading function, its URI and its fields."""

    read: Callable[[], Awaitable[Any]]
    uri: str
    fields: Mapping[str, Any]  # name, title, description, mime_type, icons, annotations, meta


def is_resource_object(value: object) -> bool:
    return hasattr(value, "uri") and callable(getattr(value, "read", None))


def resource_from_object(resource: Any, overrides: Mapping[str, Any]) -> ObjectResource:
    """`resource`'s reader and published fields; a non-None override wins over the object's own."""
    fields = {
        key: overrides[key] if overrides.get(key) is not None else getattr(resource, key, None)
        for key in _FIELDS
    }
    read: Callable[[], Awaitable[Any]] = resource.read

    async def read_object() -> Any:
        return await read()

    read_object.__name__ = str(fields["name"] or "resource")
    read_object.__doc__ = fields["description"]
    return ObjectResource(read_object, str(resource.uri), fields)
