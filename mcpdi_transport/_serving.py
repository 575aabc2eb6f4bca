"""`serve_message`: one message through the runner, for every transport.

A failure of the runner itself (a bug, never the peer's bad input) is logged and answered
as `-32603` here, the same way on stdio and over HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcpdi.lowlevel import INTERNAL_ERROR, Connection, MCPError, Peer, Request, Runner, error_response

__all__ = ("runner_failure", "serve_message")

logger = logging.getLogger("mcpdi_transport")


async def serve_message(
    runner: Runner[Any], message: Mapping[str, Any] | Request, connection: Connection, peer: Peer
) -> dict[str, Any] | None:
    """`runner.handle(message, ...)`; a request whose handling raised is answered `-32603`.

    `message` is a parsed JSON-RPC message, or a `Request` the transport already classified.
    """
    try:
        return await runner.handle(message, connection, peer)
    except Exception:
        return runner_failure(message)


def runner_failure(message: Mapping[str, Any] | Request) -> dict[str, Any] | None:
    """What answers `message` when the runner raised on it (call from its `except`): logged, `-32603`."""
    if isinstance(message, Request):
        logger.exception("the runner failed on %s", message.method)
        return error_response(message.id, MCPError(INTERNAL_ERROR, "Internal error"))
    logger.exception("the runner failed on %s", message.get("method"))
    if "id" in message and "method" in message:
        return error_response(message["id"], MCPError(INTERNAL_ERROR, "Internal error"))
    return None
