"""What a scripted client answers: accept, decline, cancel, a sampling result, a roots list."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("Reply", "accept", "cancel", "decline", "roots", "sampled")

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"


@dataclass(frozen=True, slots=True)
class Reply:
    """The client's answer to one kind of question: `method` is the request it answers."""

    method: str
    payload: Mapping[str, Any]

    def for_method(self, method: str, question: str) -> dict[str, Any]:
        """The wire answer; a reply for another kind of request is the test's mistake."""
        if method != self.method:
            msg = f"the script answers {question} with a reply for {self.method!r}, not {method!r}"
            raise AssertionError(msg)
        return dict(self.payload)


def accept(content: Mapping[str, Any] | None = None, /, **fields: Any) -> Reply:
    """The person accepted the form: `accept({"confirm": True})` or `accept(confirm=True)`."""
    return Reply(ELICIT, {"action": "accept", "content": {**(content or {}), **fields}})


def decline() -> Reply:
    """The person declined the form."""
    return Reply(ELICIT, {"action": "decline"})


def cancel() -> Reply:
    """The person dismissed the form without choosing."""
    return Reply(ELICIT, {"action": "cancel"})


def sampled(text: str, *, model: str = "scripted-model", stop_reason: str = "endTurn") -> Reply:
    """The client's LLM answered `text`."""
    return Reply(
        SAMPLE,
        {
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": model,
            "stopReason": stop_reason,
        },
    )


def roots(*uris: str, names: Mapping[str, str] | None = None) -> Reply:
    """The client's roots: `roots("file:///repo")`; `names` maps a URI to its display name."""
    listed: list[dict[str, str]] = []
    for uri in uris:
        entry = {"uri": uri}
        if names and uri in names:
            entry["name"] = names[uri]
        listed.append(entry)
    return Reply(ROOTS, {"roots": listed})
