"""The inner state of a 2026-07-28 round as one typed record, and its sealed wire format.

Resolver-driven rounds seal
`{"v": 1, "outcomes": {key: {"q": digest, "p": payload}}, "asked": {key: {"q": digest, "m": method}},
"churn": {key: n}}`;
a tool that drives its own rounds seals `{"v": 1, "body": text}`. Only the server writes these
(they travel sealed), so anything else is refused as malformed rather than repaired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from mcpdi._state._codec import InvalidRequestState

__all__ = ("ROUND_STATE_VERSION", "AskedQuestion", "BodyState", "Outcome", "RoundState")

ROUND_STATE_VERSION: Final = 1
_ROUND_FIELDS: Final = frozenset({"v", "outcomes", "asked", "churn", "round"})
_BODY_FIELDS: Final = frozenset({"v", "body"})


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        msg = f"{what} is {type(value).__name__}, not an object"
        raise InvalidRequestState(msg)
    return cast("dict[str, Any]", value)


def _fields(inner: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    if inner.get("v") != ROUND_STATE_VERSION:
        msg = f"{what} version is {inner.get('v')!r}, not {ROUND_STATE_VERSION}"
        raise InvalidRequestState(msg)
    unknown = sorted(set(inner) - allowed)
    if unknown:
        msg = f"{what} has unknown fields {unknown}"
        raise InvalidRequestState(msg)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The client's answer (`payload`, JSON) to the question whose digest is `digest`."""

    digest: str
    payload: Any


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """A question handed out last round: its digest, and the method it was asked with (which
    says what kind of response can answer it)."""

    digest: str
    method: str


@dataclass(frozen=True, slots=True)
class RoundState:
    """What a resolver-driven call carries from one round to the next.

    `outcomes`: answers recorded so far, by step key; a recorded outcome wins over anything
    sent again for its key. `asked`: the digests of the questions handed out last round; an
    answer counts only if the live question still has that digest. `churn`: per key, how many
    rounds asked a different question than the round before.
    """

    outcomes: Mapping[str, Outcome] = field(default_factory=dict[str, Outcome])
    asked: Mapping[str, AskedQuestion] = field(default_factory=dict[str, AskedQuestion])
    churn: Mapping[str, int] = field(default_factory=dict[str, int])
    round: int = 0  # rounds handed out so far for this call (telemetry numbers the next one)

    @classmethod
    def parse(cls, inner: Mapping[str, Any]) -> RoundState:
        """The record an opened `requestState` holds; raises `InvalidRequestState` when malformed."""
        _fields(inner, _ROUND_FIELDS, "round state")
        outcomes: dict[str, Outcome] = {}
        for key, record in _object(inner.get("outcomes", {}), "round state 'outcomes'").items():
            fields = _object(record, f"outcome {key!r}")
            digest = fields.get("q")
            if not isinstance(digest, str) or set(fields) != {"q", "p"}:
                msg = f"outcome {key!r} is not exactly a digest 'q' and a payload 'p'"
                raise InvalidRequestState(msg)
            outcomes[key] = Outcome(digest, fields["p"])
        asked: dict[str, AskedQuestion] = {}
        for key, record in _object(inner.get("asked", {}), "round state 'asked'").items():
            fields = _object(record, f"asked question {key!r}")
            digest, method = fields.get("q"), fields.get("m")
            if not isinstance(digest, str) or not isinstance(method, str) or len(fields) != 2:
                msg = f"asked question {key!r} is not exactly a digest 'q' and a method 'm'"
                raise InvalidRequestState(msg)
            asked[key] = AskedQuestion(digest, method)
        churn: dict[str, int] = {}
        for key, count in _object(inner.get("churn", {}), "round state 'churn'").items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                msg = f"churn count for {key!r} is {count!r}, not a count"
                raise InvalidRequestState(msg)
            churn[key] = count
        number = inner.get("round", 0)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            msg = f"round number is {number!r}, not a count"
            raise InvalidRequestState(msg)
        return cls(outcomes, asked, churn, number)

    def dump(self) -> dict[str, Any]:
        """The JSON object `parse` reads back."""
        inner: dict[str, Any] = {
            "v": ROUND_STATE_VERSION,
            "outcomes": {key: {"q": o.digest, "p": o.payload} for key, o in self.outcomes.items()},
            "asked": {key: {"q": a.digest, "m": a.method} for key, a in self.asked.items()},
        }
        if self.churn:
            inner["churn"] = dict(self.churn)
        if self.round:
            inner["round"] = self.round
        return inner


@dataclass(frozen=True, slots=True)
class BodyState:
    """The state of a tool that drives its own rounds: its own text, sealed for it."""

    body: str

    @classmethod
    def parse(cls, inner: Mapping[str, Any]) -> BodyState:
        """Raises `InvalidRequestState` unless `inner` is what `dump` made."""
        _fields(inner, _BODY_FIELDS, "body state")
        body = inner.get("body")
        if not isinstance(body, str):
            msg = "the token was not sealed for a tool that drives its own rounds"
            raise InvalidRequestState(msg)
        return cls(body)

    def dump(self) -> dict[str, Any]:
        return {"v": ROUND_STATE_VERSION, "body": self.body}
