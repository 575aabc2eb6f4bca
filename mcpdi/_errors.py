"""Failures a server author raises on purpose: told to the model as a tool error, or to the client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mcp_types import ElicitRequestURLParams

from mcpdi.lowlevel._errors import MCPError

__all__ = (
    "URL_ELICITATION_REQUIRED",
    "ElicitationRefused",
    "MCPServerError",
    "ResourceError",
    "ResourceNotFoundError",
    "ToolError",
    "UnexpectedResourceError",
    "UnexpectedToolError",
    "UrlElicitationRequiredError",
)

URL_ELICITATION_REQUIRED: Final = -32042


class MCPServerError(Exception):
    """The family of failures an `MCPServer` reports by their own text."""


class ToolError(MCPServerError):
    """Raise from a tool or a resolver to tell the model why the call failed.

    The text reaches the model as `Error executing tool <name>: <text>`; any other exception
    is reported as `Error executing tool <name>` alone, so internal details stay on the server.
    `MCPServer.call_tool` raises it too when a call fails.
    """


class UnexpectedToolError(ToolError):
    """`MCPServer.call_tool` raises this when the tool crashed; `__cause__` is what it raised.

    Its text is only `Error executing tool <name>`: what the client saw.
    """


class ResourceError(MCPServerError):
    """Raise from a resource to answer `resources/read` with -32603 and this text.

    Any other exception is answered with `Error reading resource <uri>` alone.
    """


class ResourceNotFoundError(ResourceError):
    """Raise from a resource (template) when the thing it names does not exist: -32602 with this text."""


class UnexpectedResourceError(ResourceError):
    """`MCPServer.read_resource` raises this when a resource crashed; `__cause__` is what it raised."""


class UrlElicitationRequiredError(MCPError):
    """Raise from a tool when the person must first visit one or more URLs (error -32042).

    The client shows each `ElicitRequestURLParams` (message, URL, elicitation id) to the
    person and may retry the call once they are done.
    """

    def __init__(self, elicitations: Sequence[ElicitRequestURLParams], message: str | None = None) -> None:
        if not elicitations:
            msg = "UrlElicitationRequiredError needs at least one ElicitRequestURLParams"
            raise ValueError(msg)
        if message is None:
            message = "URL elicitations required" if len(elicitations) > 1 else "URL elicitation required"
        data = {"elicitations": [e.model_dump(by_alias=True, exclude_none=True) for e in elicitations]}
        super().__init__(URL_ELICITATION_REQUIRED, message, data)
        self._elicitations = list(elicitations)

    @property
    def elicitations(self) -> list[ElicitRequestURLParams]:
        return list(self._elicitations)


class ElicitationRefused(Exception):
    """The person declined or cancelled a question whose consumer needs the answer itself."""

    def __init__(self, parameter: str, action: str) -> None:
        # The wording (and its grammar) is what clients of the reference implementation see.
        super().__init__(f"Resolver for parameter {parameter!r} could not resolve: elicitation was {action}")
        self.parameter = parameter
        self.action = action
