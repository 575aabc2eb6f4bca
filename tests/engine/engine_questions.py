"""The questions the engine's tests ask: an engine `Question` knows nothing of MCP."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpdi.engine import Question


class Confirm(Question):
    """A yes/no question: the answer "yes" resolves to True, anything else to False."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def render(self) -> Mapping[str, Any]:
        return {"text": self.text}

    def resolve_answer(self, payload: Any) -> Any:
        return payload == "yes"
