"""The 2026-07-28 multi-round loop: answer `inputRequests`, retry with `requestState`, up to a cap."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, cast

import anyio
import anyio.abc

from mcpdi.lowlevel import INVALID_PARAMS, MCPError
from mcpdi_transport._client._channel import as_object

__all__ = ("RoundLimitExceeded", "drive_rounds", "result_type_of")

Resend = Callable[[dict[str, Any] | None, str | None], Awaitable[dict[str, Any]]]
"""Re-send the original request with (`inputResponses`, `requestState`) under a fresh id."""

Answer = Callable[[str, str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]]
"""Answer one input request: (key, method, params) -> the response's wire JSON."""

_FIRST_PAUSE = 0.05
_LONGEST_PAUSE = 0.25


class RoundLimitExceeded(RuntimeError):
    """The server still asked for input after `max_rounds` rounds of one request."""

    what: str
    max_rounds: int

    def __init__(self, what: str, max_rounds: int) -> None:
        msg = (
            f"{what} still asked for input after {max_rounds} rounds; "
            f"pass Client(..., max_rounds=N) with N > {max_rounds} if it legitimately needs more"
        )
        super().__init__(msg)
        self.what = what
        self.max_rounds = max_rounds


def result_type_of(result: Mapping[str, Any], what: str, claimed: Collection[str] = ()) -> str:
    """The result's `resultType` ("complete" when absent); any other value not `claimed` by one of
    the client's extensions is refused."""
    kind = result.get("resultType", "complete")
    if kind not in ("complete", "input_required") and kind not in claimed:
        msg = f"{what} answered with resultType {kind!r}, which this client does not know"
        raise MCPError(INVALID_PARAMS, msg)
    return cast("str", kind)


async def drive_rounds(
    first: dict[str, Any],
    *,
    resend: Resend,
    answer: Answer,
    max_rounds: int,
    what: str,
    claimed: Collection[str] = (),
) -> dict[str, Any]:
    """Turn a result that may be `input_required` into the final, complete result.

    Every `inputRequests` entry of a round is answered concurrently; the retry carries
    the answers under the same keys and echoes `requestState` exactly as received (never
    parsed). A round with state only is retried after a short pause that doubles up to a
    quarter second. `what` names the request in errors (e.g. "tools/call 'greet'"). A result of
    a `claimed` type ends the loop as a complete one does; its claim finishes it.
    """
    result = first
    rounds = 0
    pause = _FIRST_PAUSE
    while result_type_of(result, what, claimed) == "input_required":
        rounds += 1
        if rounds > max_rounds:
            raise RoundLimitExceeded(what, max_rounds)
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if state is not None and not isinstance(state, str):
            msg = f"{what} answered input_required with a non-string requestState"
            raise MCPError(INVALID_PARAMS, msg)
        if requests:
            if not isinstance(requests, dict):
                msg = f"{what} answered input_required with inputRequests that is not an object"
                raise MCPError(INVALID_PARAMS, msg)
            pause = _FIRST_PAUSE
            responses: dict[str, Any] | None = await _answer_all(
                cast("dict[str, Any]", requests), answer, what
            )
        elif state is None:
            msg = f"{what} answered input_required with neither inputRequests nor requestState"
            raise MCPError(INVALID_PARAMS, msg)
        else:
            await anyio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)
            responses = None
        result = await resend(responses, state)
    return result


async def _answer_all(requests: dict[str, Any], answer: Answer, what: str) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):  # pyright: ignore[reportUnknownMemberType]
            msg = f"{what} sent input request {key!r} without a method"
            raise MCPError(INVALID_PARAMS, msg)

    failures: list[Exception] = []

    async def answer_one(key: str, request: dict[str, Any], group: anyio.abc.TaskGroup) -> None:
        try:
            responses[key] = await answer(key, request["method"], as_object(request.get("params")))
        except Exception as exc:  # the first refusal ends the round; siblings are cancelled
            failures.append(exc)
            group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for key, request in requests.items():
            group.start_soon(answer_one, key, request, group)
    if failures:
        raise failures[0]
    return {key: responses[key] for key in requests}
