"""Shutdown signals seen by the app itself, whoever serves it: the grace begins at SIGTERM or Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Any, Final

from mcpdi_transport._http._loop import running_loop

__all__ = ("drain_on_signals",)

_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def drain_on_signals(signalled: Callable[[], None]) -> Generator[None]:
    """While entered, SIGTERM and SIGINT first call `signalled` on this event loop, then the handler before.

    `signalled` runs as a loop callback, outside any task: it should only set an event.
    uvicorn (or any server) keeps its own handling: it still stops accepting and waits for
    the open responses, which the drain ends after the grace. Outside the main thread, or
    off asyncio, nothing is installed (signals cannot be taken there).
    """
    loop = running_loop()
    if loop is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}

    def on_signal(number: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(signalled)  # a signal handler may not touch the loop itself
        before = previous.get(number)
        if callable(before):
            before(number, frame)
        elif before == signal.SIG_DFL and number == signal.SIGINT:
            signal.default_int_handler(number, frame)
        elif before == signal.SIG_DFL:
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)

    for number in _SIGNALS:
        previous[number] = signal.getsignal(number)
        signal.signal(number, on_signal)
    try:
        yield
    finally:
        for number, before in previous.items():
            if signal.getsignal(number) is on_signal:
                signal.signal(number, before if before is not None else signal.SIG_DFL)
