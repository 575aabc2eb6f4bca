"""A client's side of a 2026-07-28 multi-round request: answer `inputRequests`, resend, up to a cap.

One loop serves every client mcpdi has: `mcpdi_transport.Client`, the in-memory client of
`mcpdi.testing` and `MCPServer.call_tool`. It does no I/O of its own (the caller sends and
answers) and never reads the result type: `send` hands back either the final result, whatever
it is to the caller, or the `InputRequired` that `read_input_required` made of the wire form.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio
import anyio.abc

from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError

__all__ = (
    "AnswerInputRequest",
    "InputRequired",
    "RoundLimitExceeded",
    "RoundRequest",
    "drive_rounds",
    "read_input_required",
)

ResultT = TypeVar("ResultT")

AnswerInputRequest = Callable[[str, str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]]
"""Answer one input request: `(key, method, params)` -> the response's wire JSON.

Raising (`MCPError` for a refusal) ends the request; the round's other answers are cancelled."""

_FIRST_PAUSE = 0.05
_LONGEST_PAUSE = 0.25


@dataclass(frozen=True, slots=True)
class InputRequired:
    """An `input_required` result: the requests to answer, and the `requestState` to echo."""

    input_requests: Mapping[str, RoundRequest]
    request_state: str | None


@dataclass(frozen=True, slots=True)
class RoundRequest:
    """One entry of `inputRequests`: the server-to-client request the client answers."""

    method: str
    params: Mapping[str, Any] | None


class RoundLimitExceeded(RuntimeError):
    """The server still asked for input after `max_rounds` answered rounds of one request.

    The cap counts answered rounds, as the official SDK's `input_required_max_rounds` does:
    `max_rounds=1` allows the first request and one retry."""

    what: str
    max_rounds: int

    def __init__(self, what: str, max_rounds: int) -> None:
        msg = (
            f"{what} still asked for input after {max_rounds} rounds; "
            f"pass max_rounds=N with N > {max_rounds} if it legitimately needs more"
        )
        super().__init__(msg)
        self.what = what
        self.max_rounds = max_rounds


def read_input_required(result: Mapping[str, Any], what: str) -> InputRequired | None:
    """The rounds' view of a wire result: None when it is complete (no `resultType` counts as
    complete), else its requests and state. A result this client cannot read is the server's
    fault and raises `MCPError`; `what` names the request (e.g. "tools/call 'greet'")."""
    kind = result.get("resultType", "complete")
    if kind == "complete":
        return None
    if kind != "input_required":
        msg = f"{what} answered with resultType {kind!r}, which this client does not know"
        raise MCPError(INVALID_PARAMS, msg)
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        msg = f"{what} answered input_required with a non-string requestState"
        raise MCPError(INVALID_PARAMS, msg)
    requests: object = result.get("inputRequests") or {}
    if not isinstance(requests, dict):
        msg = f"{what} answered input_required with inputRequests that is not an object"
        raise MCPError(INVALID_PARAMS, msg)
    entries = cast("dict[str, object]", requests).items()
    return InputRequired({key: _read_request(key, request, what) for key, request in entries}, state)


def _read_request(key: str, request: object, what: str) -> RoundRequest:
    method = cast("dict[str, object]", request).get("method") if isinstance(request, dict) else None
    if not isinstance(method, str):
        msg = f"{what} sent input request {key!r} without a method"
        raise MCPError(INVALID_PARAMS, msg)
    params = cast("dict[str, object]", request).get("params")
    return RoundRequest(method, cast("dict[str, Any]", params) if isinstance(params, dict) else None)


async def drive_rounds(
    first: ResultT | InputRequired,
    *,
    send: Callable[[dict[str, Any] | None, str | None], Awaitable[ResultT | InputRequired]],
    answer: AnswerInputRequest,
    max_rounds: int,
    what: str,
) -> ResultT:
    """The final result of a request whose first answer was `first`.

    Each round's input requests are answered concurrently with `answer`; `send(responses,
    state)` retries the request (under a fresh id) with the answers under the same keys and
    `requestState` exactly as received, never parsed. A round with state only is retried with
    no responses after a pause that starts at 50 ms and doubles up to a quarter second, reset
    by any round with requests. More than `max_rounds` rounds raise `RoundLimitExceeded`.
    """
    result = first
    rounds = 0
    pause = _FIRST_PAUSE
    while isinstance(result, InputRequired):
        rounds += 1
        if rounds > max_rounds:
            raise RoundLimitExceeded(what, max_rounds)
        responses: dict[str, Any] | None = None
        if result.input_requests:
            pause = _FIRST_PAUSE
            responses = await _answer_round(result.input_requests, answer)
        elif result.request_state is None:
            msg = f"{what} answered input_required with neither inputRequests nor requestState"
            raise MCPError(INVALID_PARAMS, msg)
        else:
            await anyio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)
        result = await send(responses, result.request_state)
    return result


async def _answer_round(requests: Mapping[str, RoundRequest], answer: AnswerInputRequest) -> dict[str, Any]:
    """Every request's answer, keyed as asked; the first failure cancels the others and is raised."""
    if len(requests) == 1:  # nothing to run beside it: no task group to pay for
        [(key, request)] = requests.items()
        return {key: await answer(key, request.method, request.params)}
    responses: dict[str, Any] = {}
    failures: list[Exception] = []

    async def answer_one(key: str, request: RoundRequest, group: anyio.abc.TaskGroup) -> None:
        try:
            responses[key] = await answer(key, request.method, request.params)
        except Exception as exc:  # the first refusal ends the round; siblings are cancelled
            failures.append(exc)
            group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for key, request in requests.items():
            group.start_soon(answer_one, key, request, group)
    if failures:
        raise failures[0]
    return {key: responses[key] for key in requests}
