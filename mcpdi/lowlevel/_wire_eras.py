"""The door to `mcp_types`' era modules: their pydantic models are built on first use, not on import.

Each era module (`mcp_types._v2025_11_25`, `mcp_types._v2026_07_28`) defines some 150 wire
models, and pydantic builds every model's validator and serializer when its class is created:
about 50 ms an era here, most of a stdio start after the interpreter, for a start that uses a
handful of them (`initialize`'s answer, an elicitation's form fields). pydantic's `defer_build`
setting moves each build to the model's first validation or dump, and a model inherits it from
its base's `model_config`: so the era modules' shared base, `WireModel`, gets it before either
era is imported. The models stay `mcp_types`' own classes and behave the same; only when each is
built changes. An era imported before this runs (by other code in the process) builds eagerly,
as it did.
"""

from __future__ import annotations

import functools
import sys

from mcpdi._collector import collector_paused

__all__ = ("defer_wire_model_builds", "handshake_era")

_ERA_MODULES = ("mcp_types._v2025_11_25", "mcp_types._v2026_07_28")


@functools.cache
def defer_wire_model_builds() -> None:
    """Give `WireModel` pydantic's `defer_build`, so the era models created after this build lazily."""
    from mcp_types._wire_base import WireModel  # pyright: ignore[reportPrivateUsage]

    if all(name in sys.modules for name in _ERA_MODULES):
        return  # both eras were built already: nothing left to defer
    WireModel.model_config = {**WireModel.model_config, "defer_build": True}


def handshake_era():  # the module itself: pyright types it from the import
    """The `mcp_types._v2025_11_25` module, its models built on first use."""
    with collector_paused():
        defer_wire_model_builds()
        import mcp_types._v2025_11_25 as era  # pyright: ignore[reportPrivateUsage]

    return era
