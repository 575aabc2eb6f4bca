"""The shared deadline timer: callbacks fire once their delay has passed, discarded ones never."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from mcpdi_transport._http._ticker import Ticker

pytestmark = pytest.mark.anyio


async def test_a_deadline_fires_after_its_delay_and_a_discarded_one_never() -> None:
    loop = asyncio.get_running_loop()
    ticker = Ticker(loop, delay=0.05, resolution=0.01)
    fired: list[tuple[str, float]] = []
    start = loop.time()
    ticker.add(lambda: fired.append(("kept", loop.time() - start)))
    dropped = ticker.add(lambda: fired.append(("dropped", loop.time() - start)))
    ticker.discard(dropped)
    ticker.add(lambda: fired.append(("last", loop.time() - start)))  # falls due after the dropped one
    with anyio.fail_after(5):
        while len(fired) < 2:
            await anyio.sleep(0.01)
    assert [name for name, _ in fired] == ["kept", "last"]
    assert 0.05 <= fired[0][1] < 1.0


async def test_the_timer_stops_once_no_deadline_is_left_and_starts_again_for_a_new_one() -> None:
    loop = asyncio.get_running_loop()
    ticker = Ticker(loop, delay=0.02, resolution=0.01)
    fired: list[int] = []
    ticker.add(lambda: fired.append(1))
    with anyio.fail_after(5):
        while not fired or ticker._handle is not None:  # pyright: ignore[reportPrivateUsage]
            await anyio.sleep(0.01)
    assert fired == [1]
    ticker.add(lambda: fired.append(2))
    with anyio.fail_after(5):
        while len(fired) < 2:
            await anyio.sleep(0.01)
    assert fired == [1, 2]


async def test_a_failing_callback_is_logged_and_the_next_ones_still_fire(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    ticker = Ticker(loop, delay=0.01, resolution=0.01)
    fired: list[str] = []

    def fail() -> None:
        raise RuntimeError("boom")

    ticker.add(fail)
    ticker.add(lambda: fired.append("after"))
    with anyio.fail_after(5):
        while not fired:
            await anyio.sleep(0.01)
    assert fired == ["after"]
    assert "a deadline's callback failed" in caplog.text
