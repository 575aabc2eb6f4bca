"""`MCPServer.call_tool`'s failures as exceptions: the text the model reads, the cause kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from mcpdi._asking import AnswerRejected
from mcpdi._errors import ElicitationRefused, ResourceError, ToolError, UnexpectedToolError
from mcpdi.engine import ResolverError

__all__ = ("raise_tool_failure",)

# What a resolver or the body raises to fail the call on purpose (anything else is a crash).
_ANTICIPATED = (ToolError, ResourceError, ElicitationRefused, AnswerRejected)


def raise_tool_failure(result: CallToolResult, causes: Sequence[Exception]) -> NoReturn:
    """Raise `ToolError` for an anticipated failure, `UnexpectedToolError` for a crash.

    `__cause__` is what the resolver or the body raised, as in the SDK (never the engine's
    `ResolverError` around it).
    """
    text = " ".join(block.text for block in result.content if isinstance(block, TextContent))
    cause: BaseException | None = causes[-1] if causes else None
    if isinstance(cause, ResolverError) and cause.__cause__ is not None:
        cause = cause.__cause__
        if isinstance(cause, _ANTICIPATED):
            raise ToolError(text) from cause
        raise UnexpectedToolError(text) from cause
    # A ValidationError is the client's when its text was shown (the call's arguments), and a
    # crash when it was withheld (the body's own).
    shown = isinstance(cause, ValidationError) and text.endswith(str(cause))
    if cause is None or shown or isinstance(cause, _ANTICIPATED):
        raise ToolError(text) from cause
    raise UnexpectedToolError(text) from cause
