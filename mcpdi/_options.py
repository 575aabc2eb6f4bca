"""What a decorator's arguments decide about a tool, prompt or resource: one frozen record each.

The decorator builds the record once; registration and compilation take it whole, so no option
travels by position and a new one is added in one place.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Self

from mcpdi._state._security import RequestStateSecurity

if TYPE_CHECKING:
    from mcp_types import Annotations, Icon, ToolAnnotations

    from mcpdi._resources._security import ResourceSecurity

__all__ = ("PromptOptions", "ResourceOptions", "ToolOptions", "chosen_request_state")


class _FromArguments:
    """`from_arguments(locals())`: a record built from a decorator's own parameters, by name."""

    __slots__ = ()

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> Self:
        return cls(**{name: arguments[name] for name in _field_names(cls) if name in arguments})


@functools.cache
def _field_names(cls: type[Any]) -> tuple[str, ...]:
    """A record's field names, read once per class: a decorator builds a record per function."""
    return tuple(field.name for field in fields(cls))


@dataclass(frozen=True, slots=True)
class ToolOptions(_FromArguments):
    """`@mcp.tool(...)`'s options; `max_rounds` and `required_scopes` are mcpdi's own."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    structured_output: bool | None = None
    max_rounds: int | None = None
    required_scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # `required_scopes=` is any sequence of scope names; kept as a tuple.
        object.__setattr__(self, "required_scopes", tuple(self.required_scopes))


@dataclass(frozen=True, slots=True)
class PromptOptions(_FromArguments):
    """`@mcp.prompt(...)`'s options."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None


@dataclass(frozen=True, slots=True)
class ResourceOptions(_FromArguments):
    """`@mcp.resource(uri, ...)`'s options (the URI is the resource's key, passed beside them).

    `security` None: the server's `resource_security` when the resource is registered.
    """

    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None
    security: ResourceSecurity | None = None


MISSING_AUDIENCE = (
    "request_state_security is configured but this server has no name. Sealed\n"
    "requestState carries the server name as an audience claim, so state minted by\n"
    "another service that shares the same keys is rejected; unnamed servers would\n"
    "all stamp the same placeholder and the check would mean nothing. Name the\n"
    'server (MCPServer("my-service", ...)) or set RequestStateSecurity(audience=...).'
)


def chosen_request_state(
    request_state: RequestStateSecurity | None,
    request_state_security: RequestStateSecurity | None,
    *,
    name: str | None,
) -> RequestStateSecurity:
    """`MCPServer(request_state=...)` or its official-SDK spelling; neither: ephemeral keys.

    A policy given to an unnamed server must name its audience, as in the official SDK (the
    text is the SDK's)."""
    if request_state is not None and request_state_security is not None:
        msg = (
            "MCPServer takes request_state= or request_state_security= (the official SDK's "
            "name for the same thing), not both"
        )
        raise TypeError(msg)
    chosen = request_state if request_state is not None else request_state_security
    if chosen is None:
        return RequestStateSecurity.ephemeral()
    if not name and chosen.audience is None:
        raise ValueError(MISSING_AUDIENCE)
    return chosen
