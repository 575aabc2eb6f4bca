"""A request's asyncio loop, found without asking asyncio: on Python 3.11 each ask is a system call."""

from __future__ import annotations

import asyncio
from threading import get_ident

__all__ = ("HomeLoop", "running_loop")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running the current task; None off asyncio (on trio, say).

    On Python 3.11 `asyncio.get_running_loop()` checks the process id on every call (a
    `getpid()` system call: 3.12 dropped the check), and so does `asyncio.current_task()`
    without a loop, which asks it. A request's hot path finds its loop once (`HomeLoop`)
    and passes it to what needs it; `asyncio.current_task(loop)` is then a dict lookup.
    """
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class HomeLoop:
    """The loop an app's lifespan runs on, and that loop's thread: where its requests run, as a rule."""

    __slots__ = ("_loop", "_thread")

    def __init__(self) -> None:
        """The current loop and thread (make it in the lifespan)."""
        self._loop = running_loop()
        self._thread = get_ident()

    def running(self) -> asyncio.AbstractEventLoop | None:
        """The running asyncio loop (None off asyncio), as `running_loop` gives it.

        The home loop is the running one when this is its thread and it is running: a thread
        runs one loop at a time. Anything else (another thread, a stopped loop, trio) asks.
        """
        loop = self._loop
        if loop is not None and self._thread == get_ident() and loop.is_running():
            return loop
        return running_loop()
