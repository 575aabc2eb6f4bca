"""Failures a tool call reports to the model as an `isError` result rather than a protocol error."""

from __future__ import annotations

__all__ = ("ElicitationRefused", "ToolError")


class ToolError(Exception):
    """Raise from a tool or a resolver to tell the model why the call failed.

    The text reaches the model as `Error executing tool <name>: <text>`; any other exception
    is reported as `Error executing tool <name>` alone, so internal details stay on the server.
    """


class ElicitationRefused(Exception):
    """The person declined or cancelled a question whose consumer needs the answer itself."""

    def __init__(self, parameter: str, action: str) -> None:
        # The wording (and its grammar) is what clients of the reference implementation see.
        super().__init__(f"Resolver for parameter {parameter!r} could not resolve: elicitation was {action}")
        self.parameter = parameter
        self.action = action
