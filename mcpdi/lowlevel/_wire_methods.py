"""`mcp_types.methods`, imported on first use: a handshake `initialize` is answered without it.

`mcp_types.methods` imports the wire models of every protocol era (each era's module builds
all its pydantic models on import, about 70 ms apiece here). The first answer of a
handshake-era server, `initialize`, needs only the handshake era's `InitializeResult`, so
that one is imported alone and the method maps wait for the next request.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpdi._collector import collector_paused
from mcpdi.lowlevel._wire_eras import defer_wire_model_builds, handshake_era

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ("methods", "serialize_initialize_result")


@functools.cache
def methods():  # the module itself: pyright types it from the import
    """The `mcp_types.methods` module (imported by the first call, its era models built lazily)."""
    with collector_paused():
        defer_wire_model_builds()
        from mcp_types import methods

    return methods


@functools.cache
def _initialize_result() -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter[Any](handshake_era().InitializeResult)


def serialize_initialize_result(version: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """`methods.serialize_server_result("initialize", version, data)` for a handshake version.

    Every handshake version's `initialize` result is the 2025-11-25 era's `InitializeResult`
    in `methods.SERVER_RESULTS` (a test holds the two equal), validated and dumped as there.
    """
    if version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return methods().serialize_server_result("initialize", version, data)
    adapter = _initialize_result()
    return adapter.dump_python(
        adapter.validate_python(data, by_name=False), by_alias=True, mode="json", exclude_none=True
    )
