"""`mcpdi.lowlevel.drive_rounds`, the one client round loop, driven with no transport at all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from mcpdi.lowlevel import (
    InputRequired,
    MCPError,
    RoundLimitExceeded,
    RoundRequest,
    drive_rounds,
    read_input_required,
)

pytestmark = pytest.mark.anyio

WHAT = "tools/call 'greet'"
ROOTS = RoundRequest("roots/list", None)


def asking(*requests: str, state: str | None = "s") -> InputRequired:
    return InputRequired({key: ROOTS for key in requests}, state)


class Server:
    """Answers each send with the next of `rounds`, then "done"; records what each send carried."""

    def __init__(self, *rounds: InputRequired) -> None:
        self.rounds = list(rounds)
        self.sent: list[tuple[dict[str, Any] | None, str | None]] = []

    async def send(self, answers: dict[str, Any] | None, state: str | None) -> str | InputRequired:
        self.sent.append((answers, state))
        return self.rounds.pop(0) if self.rounds else "done"


async def roots_of(key: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"roots": [{"uri": f"file:///{key}"}]}


async def test_the_answers_of_one_round_are_given_concurrently_under_their_keys() -> None:
    both_asked = anyio.Event()
    waiting: set[str] = set()

    async def answer(key: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        waiting.add(key)
        if waiting == {"a", "b"}:
            both_asked.set()
        await both_asked.wait()  # answered one after the other, the first would wait forever
        return await roots_of(key, method, params)

    server = Server()
    with anyio.fail_after(5):
        result = await drive_rounds(
            asking("a", "b"), send=server.send, answer=answer, max_rounds=1, what=WHAT
        )
    assert result == "done"
    assert server.sent == [
        ({"a": {"roots": [{"uri": "file:///a"}]}, "b": {"roots": [{"uri": "file:///b"}]}}, "s")
    ]


async def test_the_cap_counts_answered_rounds_as_the_official_client_does() -> None:
    server = Server(asking("a", state="s2"), asking("a", state="s3"))
    result = await drive_rounds(asking("a"), send=server.send, answer=roots_of, max_rounds=3, what=WHAT)
    assert (result, [state for _, state in server.sent]) == ("done", ["s", "s2", "s3"])

    server = Server(asking("a"), asking("a"))
    with pytest.raises(RoundLimitExceeded) as caught:
        await drive_rounds(asking("a"), send=server.send, answer=roots_of, max_rounds=2, what=WHAT)
    assert len(server.sent) == 2
    assert str(caught.value) == snapshot(
        "tools/call 'greet' still asked for input after 2 rounds; "
        "pass max_rounds=N with N > 2 if it legitimately needs more"
    )


async def test_a_state_only_round_is_retried_with_no_answers_and_the_state_as_received() -> None:
    server = Server(asking(state="later"))
    with anyio.fail_after(5):
        result = await drive_rounds(
            asking(state="now"), send=server.send, answer=roots_of, max_rounds=5, what=WHAT
        )
    assert (result, server.sent) == ("done", [(None, "now"), (None, "later")])


async def test_the_first_refused_answer_ends_the_call_as_itself_and_cancels_the_others() -> None:
    cancelled: list[str] = []

    async def answer(key: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        if key == "refused":
            raise MCPError(-1, "the person is away")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(key)
            raise
        return {}

    server = Server()
    with anyio.fail_after(5), pytest.raises(MCPError) as caught:
        await drive_rounds(
            asking("slow", "refused"), send=server.send, answer=answer, max_rounds=1, what=WHAT
        )
    assert (caught.value.message, cancelled, server.sent) == ("the person is away", ["slow"], [])


async def test_a_round_with_neither_requests_nor_state_is_the_servers_fault() -> None:
    with pytest.raises(MCPError) as caught:
        await drive_rounds(asking(state=None), send=Server().send, answer=roots_of, max_rounds=1, what=WHAT)
    assert caught.value.message == snapshot(
        "tools/call 'greet' answered input_required with neither inputRequests nor requestState"
    )


def test_a_wire_result_reads_as_complete_or_as_its_requests_and_state() -> None:
    assert read_input_required({"content": []}, WHAT) is None
    assert read_input_required({"resultType": "complete"}, WHAT) is None
    wire = {
        "resultType": "input_required",
        "inputRequests": {"a": {"method": "roots/list"}, "b": {"method": "ping", "params": {"x": 1}}},
        "requestState": "s",
    }
    assert read_input_required(wire, WHAT) == InputRequired(
        {"a": ROOTS, "b": RoundRequest("ping", {"x": 1})}, "s"
    )


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            {"resultType": "input_required", "requestState": 7},
            f"{WHAT} answered input_required with a non-string requestState",
        ),
        (
            {"resultType": "input_required", "inputRequests": ["a"]},
            f"{WHAT} answered input_required with inputRequests that is not an object",
        ),
        (
            {"resultType": "input_required", "inputRequests": {"a": "roots/list"}},
            f"{WHAT} sent input request 'a' without a method",
        ),
    ],
)
def test_a_malformed_wire_round_is_refused_with_what_is_wrong(result: dict[str, Any], message: str) -> None:
    with pytest.raises(MCPError) as caught:
        read_input_required(result, WHAT)
    assert caught.value.message == message
