"""mcpdi's imports run with the cyclic garbage collector paused: they allocate much and free little.

The modules behind mcpdi's names (imported on first use), the wire types and an era's wire
models create some hundred thousand objects that live as long as the process. Counting
allocations, the collector walks them again and again on the way, and in full once, which
lands inside a stdio start before its first answer. Paused, it walks what survives once, at
its first collection after the import. It is restored as it was found, whatever the import
raised: code that disabled it itself keeps it disabled.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ("collector_paused",)


@contextmanager
def collector_paused() -> Generator[None]:
    """Pause the garbage collector for the block; enable it again after if it was enabled before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
