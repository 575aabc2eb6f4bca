"""`UserMessage` and `AssistantMessage`: what a prompt function returns, text or any content block."""

from __future__ import annotations

from typing import Any, Literal

from mcp_types import ContentBlock, PromptMessage, TextContent
from pydantic import BaseModel

from mcpdi._output._media import Audio, Image

__all__ = ("AssistantMessage", "Message", "UserMessage")


def _as_block(content: str | ContentBlock | Image | Audio) -> ContentBlock:
    if isinstance(content, str):
        return TextContent(type="text", text=content)
    if isinstance(content, Image):
        return content.to_image_content()
    if isinstance(content, Audio):
        return content.to_audio_content()
    return content


class Message(BaseModel):
    """One prompt message; `content` may be text, an `Image`/`Audio` or a content block."""

    role: Literal["user", "assistant"]
    content: ContentBlock

    def __init__(self, content: str | ContentBlock | Image | Audio, **fields: Any) -> None:
        super().__init__(content=_as_block(content), **fields)

    def to_prompt_message(self) -> PromptMessage:
        return PromptMessage(role=self.role, content=self.content)


class UserMessage(Message):
    """A message in the user's voice (`UserMessage("Review this code")`)."""

    role: Literal["user", "assistant"] = "user"


class AssistantMessage(Message):
    """A message in the assistant's voice, e.g. to start its answer."""

    role: Literal["user", "assistant"] = "assistant"
