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

_ANTICIPATED = (ToolError, ResourceError, ElicitationRefused, AnswerRejected, ValidationError)


def raise_tool_failure(result: CallToolResult, causes: Sequence[Exception]) -> NoReturn:
    """Raise `ToolError` for an anticipated failure, `UnexpectedToolError` for a crash."""
    text = " ".join(block.text for block in result.content if isinstance(block, TextContent))
    cause: BaseException | None = causes[-1] if causes else None
    inner = cause.__cause__ if isinstance(cause, ResolverError) else cause
    if inner is None or isinstance(inner, _ANTICIPATED):
        raise ToolError(text) from cause
    raise UnexpectedToolError(text) from cause
