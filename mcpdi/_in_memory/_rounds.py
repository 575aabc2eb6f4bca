"""The in-memory client's 2026-07-28 rounds: answer `inputRequests` from a script, retry, count."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ("InputRequired", "answer_rounds")

ResultT = TypeVar("ResultT")


@dataclass(frozen=True, slots=True)
class InputRequired:
    """What an `input_required` result asks: its input requests in wire form, and its state."""

    requests: Mapping[str, Mapping[str, Any]]
    state: str | None


async def answer_rounds(
    result: ResultT,
    *,
    input_required: Callable[[ResultT], InputRequired | None],
    answer: Callable[[int, str, str, Mapping[str, Any] | None], dict[str, Any]],
    resend: Callable[[dict[str, Any], str | None], Awaitable[ResultT]],
    max_rounds: int,
    what: str,
) -> tuple[ResultT, int]:
    """The final result of a request first answered with `result`, and how many requests it took.

    `input_required` reads a result (None when it is complete); `answer(round, key, method,
    params)` gives the client's wire answer to one input request, in order; `resend(answers,
    state)` retries the request with them. More than `max_rounds` requests fail the test.
    """
    requests = 1
    while (pending := input_required(result)) is not None:
        if requests >= max_rounds:
            msg = f"{what} still asked for input after {max_rounds} rounds"
            raise AssertionError(msg)
        answers = {
            key: answer(requests, key, request["method"], request.get("params"))
            for key, request in pending.requests.items()
        }
        result = await resend(answers, pending.state)
        requests += 1
    return result, requests
