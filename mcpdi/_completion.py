"""`@mcp.completion()`: one function suggests values for prompt arguments and template variables."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import INTERNAL_ERROR, MCPError

__all__ = ("CompletionHandler", "completion_handler")

logger = logging.getLogger("mcpdi")

CompletionHandler = Callable[
    [PromptReference | ResourceTemplateReference, CompletionArgument, CompletionContext | None],
    Awaitable[Completion | None],
]


def completion_handler(
    fn: CompletionHandler,
) -> Callable[[ServerRequestContext[Any], CompleteRequestParams], Awaitable[CompleteResult]]:
    """The `completion/complete` handler calling `fn(ref, argument, context)`; None means no values."""

    async def handle(ctx: ServerRequestContext[Any], params: CompleteRequestParams) -> CompleteResult:
        try:
            completion = await fn(params.ref, params.argument, params.context)
        except MCPError:
            raise
        except Exception as error:
            logger.exception("Completion of argument %r failed", params.argument.name)
            msg = f"Error completing argument {params.argument.name}"
            raise MCPError(INTERNAL_ERROR, msg) from error
        return CompleteResult(completion=completion if completion is not None else Completion(values=[]))

    return handle
