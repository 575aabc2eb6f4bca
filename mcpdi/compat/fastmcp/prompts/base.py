"""`mcp.server.fastmcp.prompts.base` of the SDK's 1.x line: the prompt message classes."""

from __future__ import annotations

from mcpdi import AssistantMessage, Message, UserMessage

__all__ = ("AssistantMessage", "Message", "UserMessage")
