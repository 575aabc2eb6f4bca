"""One session's byte budget (`max_buffered_bytes`) held by two mcpdi processes sharing it in Redis.

Two backends (`gateway_backend.py`) on one real redis-server, a session buffering at most
8 KiB; the tests talk to each backend directly to choose which one writes which stream.
"""

from __future__ import annotations

import secrets
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
from handshake_http import Event, events, headers, initialize, post_stream, request
from scale_services import Redis, free_port, python_server, start_redis, stop

pytestmark = pytest.mark.slow

BACKEND_SCRIPT = Path(__file__).parent / "gateway_backend.py"
LIMIT = 8192
UNREACHABLE = "The shared session store (Redis) is unreachable; send the same request again shortly"


@dataclass
class Backends:
    eu: str
    us: str
    redis: Redis


@pytest.fixture(scope="module")
def backends() -> Iterator[Backends]:
    server = start_redis()
    eu, us = free_port(), free_port()
    env = {
        "MCPDI_STATE_KEYS": secrets.token_hex(32),
        "REDIS_URL": server.url,
        "SHARED_SESSIONS": "1",
        "REDIS_TIMEOUT": "1",
        "MAX_BUFFERED_BYTES": str(LIMIT),
    }
    try:
        with (
            python_server(BACKEND_SCRIPT, eu, {**env, "BACKEND": "eu1"}),
            python_server(BACKEND_SCRIPT, us, {**env, "BACKEND": "us1"}),
        ):
            yield Backends(f"http://127.0.0.1:{eu}/mcp", f"http://127.0.0.1:{us}/mcp", server)
    finally:
        stop(server.process)


def hold(id_: int, kilobytes: int, pause: float = 0.0) -> str:
    return request(id_, "tools/call", {"name": "hold", "arguments": {"kilobytes": kilobytes, "pause": pause}})


def logs(received: Iterator[Event], count: int) -> list[Event]:
    """The next `count` messages of a stream (priming events skipped)."""
    taken: list[Event] = []
    for event in received:
        if event.message is not None:
            taken.append(event)
        if len(taken) == count:
            break
    return taken


def stream_and_number(event_id: str | None) -> tuple[str, int]:
    assert event_id is not None
    stream_id, _, number = event_id.rpartition("-")
    return stream_id, int(number)


class Stored:
    """What Redis holds of one session's events, read the way a person debugging would."""

    def __init__(self, url: str, session_id: str) -> None:
        self.client: Any = redis.Redis.from_url(url)
        self.session_id = session_id

    def events(self, stream_id: str) -> list[tuple[int, int]]:
        """(number, size) of each stored event of the stream, its end aside."""
        entries = self.client.xrange(f"mcpdi:session:events:{self.session_id}:{stream_id}")
        return [
            (int(entry_id.partition(b"-")[2]), len(fields[b"f"]))
            for entry_id, fields in entries
            if b"f" in fields
        ]

    def all_events(self) -> dict[str, list[tuple[int, int]]]:
        pattern = f"mcpdi:session:events:{self.session_id}:*"
        streams = [key.decode().rpartition(":")[2] for key in self.client.scan_iter(pattern)]
        return {stream_id: self.events(stream_id) for stream_id in streams}

    def counted(self) -> int | None:
        total = self.client.hget(f"mcpdi:session:bytes:{self.session_id}", "total")
        return None if total is None else int(total)

    def budget_keys(self) -> int:
        return int(
            self.client.exists(
                f"mcpdi:session:bytes:{self.session_id}", f"mcpdi:session:streams:{self.session_id}"
            )
        )

    def until(self, holds: Any, what: str, timeout: float = 10.0) -> None:
        """Wait for the copy to Redis, which runs behind the answers."""
        deadline = time.monotonic() + timeout
        while not holds():
            assert time.monotonic() < deadline, f"Redis never showed {what}: {self.all_events()}"
            time.sleep(0.05)


@contextmanager
def stored(backends: Backends, session_id: str) -> Iterator[Stored]:
    view = Stored(backends.redis.url, session_id)
    try:
        yield view
    finally:
        view.client.close()


def first_resumed(url: str, session_id: str, last_event_id: str) -> int:
    """The number of the first event a client resuming after `last_event_id` on `url` gets."""
    resumed = headers(session_id, **{"last-event-id": last_event_id})
    with httpx2.Client(timeout=30) as client, client.stream("GET", url, headers=resumed) as response:
        assert response.status_code == 200, response.read()
        return stream_and_number(next(events(response)).id)[1]


def test_one_session_writing_on_two_processes_holds_its_byte_budget_together(backends: Backends) -> None:
    session_id = initialize(backends.eu)
    with (
        stored(backends, session_id) as redis_view,
        post_stream(backends.eu, session_id, hold(1, 5)) as older,
    ):
        early = logs(events(older), 5)
        older_id, _ = stream_and_number(early[0].id)
        redis_view.until(lambda: len(redis_view.events(older_id)) == 6, "the older stream's 6 events")
        with post_stream(backends.us, session_id, hold(2, 5)) as newer:
            late = logs(events(newer), 5)
            newer_id, newest = stream_and_number(late[-1].id)
            # Each process alone holds less than the budget (5 KiB and some), together more.
            redis_view.until(
                lambda: newest in dict(redis_view.events(newer_id)), "the newer stream's last event"
            )
            kept = {stream_id: redis_view.events(stream_id) for stream_id in (older_id, newer_id)}
            held = sum(size for stream in kept.values() for _, size in stream)
            assert 0 < held <= LIMIT
            assert redis_view.counted() == held
            # The oldest events went first: from the stream eu1 wrote before, none of us1's.
            assert [number for number, _ in kept[newer_id]] == list(range(newest + 1))
            first_kept = kept[older_id][0][0]
            assert first_kept > 1
            # eu1, which writes that stream, dropped them from its memory too: a client resuming
            # it there skips ahead to what is kept, as a client resuming elsewhere does.
            deadline = time.monotonic() + 10
            while first_resumed(backends.eu, session_id, f"{older_id}-0") < first_kept:
                assert time.monotonic() < deadline, "eu1 still holds the events Redis dropped"
                time.sleep(0.05)
            assert first_resumed(backends.us, session_id, f"{older_id}-0") == first_kept


def test_a_stream_read_to_its_end_no_longer_counts_once_its_process_opens_the_next(
    backends: Backends,
) -> None:
    session_id = initialize(backends.eu)  # its stream, read to the end, is forgotten on eu1's next
    with stored(backends, session_id) as redis_view:
        for n, url in enumerate((backends.us, backends.eu, backends.us)):
            body = request(n, "tools/call", {"name": "whoami"})
            with post_stream(url, session_id, body) as response:
                assert [event.message["id"] for event in events(response) if event.message] == [n]

        def forgotten() -> bool:
            streams = redis_view.all_events()
            holding = [events for events in streams.values() if events]
            counted = sum(size for events in holding for _, size in events)
            return len(streams) == 4 and len(holding) == 2 and redis_view.counted() == counted

        redis_view.until(forgotten, "only the last stream of each process kept, and counted")


def test_a_session_that_ends_frees_its_events_and_their_count(backends: Backends) -> None:
    session_id = initialize(backends.eu)
    with stored(backends, session_id) as redis_view, post_stream(backends.eu, session_id, hold(1, 3)) as held:
        received = events(held)
        logs(received, 3)
        redis_view.until(lambda: (redis_view.counted() or 0) > 3000, "the held stream's bytes counted")
        assert httpx2.delete(backends.us, headers=headers(session_id)).status_code == 200
        assert [event.message for event in received if event.message is not None] == []  # cancelled
        redis_view.until(lambda: redis_view.budget_keys() == 0, "the count gone")
        assert not any(redis_view.all_events().values())


def test_events_written_while_redis_is_stopped_reach_the_client_and_count_once_after(
    backends: Backends,
) -> None:
    session_id = initialize(backends.eu)
    with (
        stored(backends, session_id) as redis_view,
        post_stream(backends.eu, session_id, hold(1, 4, 0.3)) as held,
    ):
        received = events(held)
        stream_id, _ = stream_and_number(logs(received, 1)[0].id)
        backends.redis.process.send_signal(signal.SIGSTOP)  # stops answering; keeps its data
        try:
            # Written meanwhile: the client reading the stream gets every event, nothing waits.
            rest = logs(received, 3)
            assert [event.message["params"]["data"][:11] for event in rest if event.message] == [
                f"{n:04d} on eu1" for n in (1, 2, 3)
            ]
            refused = httpx2.get(
                backends.us, headers=headers(session_id, **{"last-event-id": f"{stream_id}-1"}), timeout=30
            )
            assert refused.status_code == 503
            assert refused.json()["error"] == {"code": -32603, "message": UNREACHABLE}
        finally:
            backends.redis.process.send_signal(signal.SIGCONT)
        # The copies retried while Redis was away land once each, and are counted once.
        redis_view.until(lambda: len(redis_view.events(stream_id)) == 5, "the 5 events of the stream")
        kept = redis_view.events(stream_id)
        assert [number for number, _ in kept] == [0, 1, 2, 3, 4]
        assert redis_view.counted() == sum(size for _, size in kept)
