"""The implementations under test: each turns a graph and a variant into an awaitable call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.graphs import Graph, Variant

Call = Callable[[Mapping[str, Any]], Awaitable[Any]]
"""One tool call through an implementation: the tool's arguments in, the tool's return value out."""


@dataclass(frozen=True, slots=True)
class Unavailable:
    """The implementation cannot express this graph/variant; `reason` goes into the table."""

    reason: str


@dataclass(frozen=True, slots=True)
class Built:
    call: Call
    note: str = ""


def adapted(inner: Call) -> Call:
    """One adapter layer around `inner`, as every peer's own `call` closure has.

    The peers reach their resolver machinery through such a closure; wrapping mcpdi and the
    hand-written baseline alike keeps the extra coroutine frame (~0.1 µs) out of the ratios.
    """

    async def call(arguments: Mapping[str, Any]) -> Any:
        return await inner(arguments)

    return call


@dataclass(frozen=True, slots=True)
class Impl:
    name: str
    build: Callable[[Graph, Variant], Built | Unavailable]


def all_impls() -> tuple[Impl, ...]:
    """Every implementation, the hand-written baseline first (ratios are taken against it)."""
    from benchmarks.peers import (
        fast_depends_inject,
        fastapi_solve,
        fastmcp_depends,
        hand,
        hand_one_hop,
        mcp_sdk,
        mcpdi_engine,
    )

    return (
        hand.IMPL,
        hand_one_hop.IMPL,
        mcpdi_engine.IMPL,
        mcp_sdk.IMPL,
        mcp_sdk.IMPL_WITH_VALIDATION,
        fastmcp_depends.IMPL,
        fast_depends_inject.IMPL,
        fastapi_solve.IMPL,
    )
