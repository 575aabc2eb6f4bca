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
import importlib
from collections.abc import Generator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any

__all__ = ("collector_paused", "load_name")


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


def load_name(
    package: str,
    homes: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    name: str,
    *,
    modules: frozenset[str] = frozenset(),
) -> Any:
    """A package's module `__getattr__` (PEP 562): import `name`'s home with the collector
    paused and keep the value in the package's `namespace`, so the next access finds it there.

    `modules` are names whose value is their home module itself rather than an attribute of it.
    """
    home = homes.get(name)
    if home is None:
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)
    with collector_paused():
        module = importlib.import_module(home)
    value = module if name in modules else getattr(module, name)
    namespace[name] = value
    return value
