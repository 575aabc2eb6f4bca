"""Questions a resolver asks instead of answering, and the answers a caller sends back."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpdi.engine._plan import Step


class Question:
    """Base class of everything a resolver may return to ask instead of answer.

    A subclass implements `render` (a canonical, JSON-able rendering: the answer to a question
    is accepted only for the exact rendering that was asked) and may override `resolve_answer`
    (turn the client's payload into the injected value; it may raise, and the engine lets the
    exception through unchanged). A plain class, not an ABC: the engine checks
    `isinstance(value, Question)` after every resolver, and ABC checks are slower.
    """

    __slots__ = ()

    def render(self) -> Mapping[str, Any]:
        msg = f"{type(self).__qualname__} must implement render() -> Mapping[str, Any]"
        raise NotImplementedError(msg)

    def resolve_answer(self, payload: Any) -> Any:
        return payload


def digest_of(question: Question) -> str:
    """The digest an answer must carry: base64url(sha256(canonical JSON of the render))[:22]."""
    text = json.dumps(question.render(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")[:22]


KEPT = "kept"  # the digest of a kept value: never a real digest, which has 22 characters


@dataclass(frozen=True, slots=True)
class Answer:
    """A caller's answer to the question with this digest (the step's key is the mapping key).

    `Answer.kept(value)` hands back the value of a call-scoped step from an earlier round
    (`NeedsInput.kept`), so that the step does not run again.
    """

    digest: str
    payload: Any

    @classmethod
    def kept(cls, value: Any) -> Answer:
        return cls(KEPT, value)


@dataclass(frozen=True, slots=True)
class Asked:
    """One question a step asks this round: `key` is the step's opaque wire key."""

    key: str
    question: Question
    digest: str
    step: Step


@dataclass(frozen=True, slots=True)
class NeedsInput:
    """A run stopped before the root: these questions need answers (send them as `answers`).

    `kept` holds the values of call-scoped steps by step key: hand each back next round as
    `answers[key] = Answer.kept(value)`, and the step does not run again.
    """

    questions: tuple[Asked, ...]
    kept: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
