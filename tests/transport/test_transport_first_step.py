"""Awaiting by hand: an await that finishes at once gives its value, one that waits goes on as awaited."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import anyio
import pytest

from mcpdi_transport._http._first_step import Waiting, first_step, rest_of
from mcpdi_transport._http._security import BodyLimit

pytestmark = pytest.mark.anyio


async def at_once() -> str:
    return "done"


async def after_a_wait() -> str:
    await asyncio.sleep(0)
    await asyncio.sleep(0.01)
    return "waited"


class FutureLike:
    """An awaitable that is no coroutine: its `__await__` waits on a future."""

    def __init__(self, future: asyncio.Future[str]) -> None:
        self.future = future

    def __await__(self) -> Any:
        return (yield from self.future)


async def test_an_await_that_needs_no_wait_gives_its_value_from_the_first_step() -> None:
    assert first_step(at_once()) == "done"


async def test_an_await_that_waits_goes_on_with_rest_of_as_if_awaited_whole() -> None:
    first = first_step(after_a_wait())
    assert isinstance(first, Waiting)
    assert await rest_of(first) == "waited"


@types.coroutine
def generator_based() -> Any:
    yield from asyncio.sleep(0.01).__await__()
    return "generated"


async def test_a_generator_based_coroutine_is_stepped_as_it_is() -> None:
    first = first_step(generator_based())
    assert isinstance(first, Waiting)
    assert await rest_of(first) == "generated"


async def test_an_awaitable_that_is_no_coroutine_is_stepped_through_its_await() -> None:
    future = asyncio.get_running_loop().create_future()
    first = first_step(FutureLike(future))
    assert isinstance(first, Waiting)
    asyncio.get_running_loop().call_later(0.01, future.set_result, "resolved")
    assert await rest_of(first) == "resolved"


class PlainIterator:
    """An `__await__` giving a plain iterator (no `send`, no `throw`), as `await` allows."""

    def __init__(self, future: asyncio.Future[str]) -> None:
        self.future = future

    def __await__(self) -> Any:
        return self

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        if self.future.done():
            raise StopIteration(self.future.result())
        self.future._asyncio_future_blocking = True  # as `Future.__await__` marks it for the task
        return self.future


async def test_an_awaitable_whose_await_is_a_plain_iterator_is_stepped_as_await_steps_it() -> None:
    awaited = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_later(0.01, awaited.set_result, "awaited")
    assert await PlainIterator(awaited) == "awaited"  # a valid awaitable
    future = asyncio.get_running_loop().create_future()
    first = first_step(PlainIterator(future))
    assert isinstance(first, Waiting)
    asyncio.get_running_loop().call_later(0.01, future.set_result, "plain")
    assert await rest_of(first) == "plain"


async def test_a_cancellation_while_waiting_reaches_the_await_itself() -> None:
    seen: list[str] = []

    async def sleeper() -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled inside")
            raise
        return "never"

    with anyio.move_on_after(0.05) as scope:
        first = first_step(sleeper())
        assert isinstance(first, Waiting)
        await rest_of(first)
    assert (scope.cancelled_caught, seen) == (True, ["cancelled inside"])


async def test_an_error_in_the_first_step_is_raised_by_it() -> None:
    async def broken() -> str:
        raise ValueError("no body")

    with pytest.raises(ValueError, match="no body"):
        first_step(broken())


def sent_to(sent: list[dict[str, Any]]) -> Any:
    async def send(message: Any) -> None:
        sent.append(message)

    return send


SCOPE = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}


async def test_a_body_whose_first_message_waits_is_read_within_the_deadline() -> None:
    seen: list[bytes] = []

    async def late_body() -> dict[str, Any]:
        await anyio.sleep(0.01)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((await receive())["body"])

    with anyio.fail_after(5):
        await BodyLimit(app, body_timeout=30)(SCOPE, late_body, sent_to([]))
    assert seen == [b"{}"]


async def test_a_body_whose_first_message_never_comes_gets_408() -> None:
    async def no_body() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def never_called(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the app must not see a body that never came")

    sent: list[dict[str, Any]] = []
    with anyio.fail_after(5):
        await BodyLimit(never_called, body_timeout=0.1)(SCOPE, no_body, sent_to(sent))
    assert (sent[0]["status"], sent[1]["body"]) == (408, b"Request body not received in time")
