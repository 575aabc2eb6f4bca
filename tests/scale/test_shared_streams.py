"""The answer stream of a shared session tells the event store who writes it before its first event leaves.

A client holding one of its event ids may resume it on any process; should the writer die
before its events reached the store, that process still knows the stream and fails its call.
The store here is an in-memory double: the order of writes and events is the subject.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import pytest

from mcpdi_transport._http._shared_streams import Mirror, MirroredStream
from mcpdi_transport._http._sse import ByteBudget
from mcpdi_transport._http._store import Trimmed
from mcpdi_transport._redis import StoreUnavailable

pytestmark = pytest.mark.anyio

WRITER = "a" * 16
STREAM = "0123456789abcdef"
PRIMING = f"id: {STREAM}-0\r\nretry: 1000\r\ndata: \r\n\r\n".encode()


class Events:
    """An event store that records the writers it was told of; `refusals` first writes are refused."""

    def __init__(self, *, refusals: int = 0) -> None:
        self.refusals = refusals
        self.writers: dict[str, tuple[str, str]] = {}
        self.recorded = anyio.Event()
        self.release = anyio.Event()
        self.release.set()

    async def begin(self, key: str, *, writer: str, answering: str, ttl: float) -> None:
        await self.release.wait()
        if self.refusals:
            self.refusals -= 1
            raise StoreUnavailable("The shared session store (Redis) is unreachable")
        self.writers[key] = (writer, answering)
        self.recorded.set()

    async def append(
        self, key: str, events: Sequence[tuple[int, bytes]], *, ttl: float, writer: str, max_bytes: int
    ) -> list[Trimmed]:
        return []

    async def end(self, key: str, *, ttl: float) -> None:
        pass

    async def orphaned(self, key: str) -> str | None:
        return None

    async def trim(self, key: str, first_kept: int) -> None:
        pass

    async def forget(self, key: str, *, writer: str) -> None:
        pass

    async def exists(self, key: str) -> bool:
        return key in self.writers

    async def read(self, key: str, after: int, *, wait: float) -> tuple[list[tuple[int, bytes]], bool]:
        return [], False


async def told(trim: Trimmed) -> None:  # pragma: no cover - one process: nothing to tell
    pass


def answer_stream(events: Events) -> tuple[Mirror, MirroredStream]:
    """A mirror writing to `events`, and the primed stream of the answer to request 7."""
    mirror = Mirror(events, 60, writer=WRITER, max_bytes=1 << 20, tell=told)
    stream = MirroredStream(STREAM, f"s:{STREAM}", budget=ByteBudget(1 << 20), mirror=mirror, answering="7")
    stream.prime(1000)
    return mirror, stream


async def test_the_first_event_leaves_only_once_the_store_knows_who_writes_the_stream() -> None:
    events = Events()
    events.release = anyio.Event()
    _, stream = answer_stream(events)
    stream.close()  # the priming event, then the end
    sent: list[bytes] = []

    async def send() -> None:
        sent.extend([frame async for frame in stream.follow(first_reader=True)])

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await anyio.wait_all_tasks_blocked()
            assert (sent, events.writers) == ([], {})
            events.release.set()
    assert events.writers == {f"s:{STREAM}": (WRITER, "7")}
    assert sent == [PRIMING]


async def test_a_writer_the_store_cannot_record_now_is_recorded_later_and_the_stream_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = Events(refusals=1)
    mirror, stream = answer_stream(events)
    stream.close()
    with anyio.fail_after(10):
        with caplog.at_level(logging.ERROR, "mcpdi_transport"):
            sent = [frame async for frame in stream.follow(first_reader=True)]
        assert (sent, events.writers) == ([PRIMING], {})
        assert "cannot record the writer of an SSE stream in the shared store, retrying" in caplog.text
        async with anyio.create_task_group() as group:
            group.start_soon(mirror.run)
            await events.recorded.wait()
            group.cancel_scope.cancel()
    assert events.writers == {f"s:{STREAM}": (WRITER, "7")}
