"""`lifespan=` must be an async context manager factory: a generator is refused with the fix."""

# ruff: noqa: E501  # pinned error texts are long single-line literals
from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from inline_snapshot import snapshot

from mcpdi import InvalidSignature, MCPServer


def message_of(lifespan: Any) -> str:
    with pytest.raises(InvalidSignature) as caught:
        MCPServer("x", lifespan=lifespan)
    return re.sub(r"\(/\S+:\d+\)", "(FILE:LINE)", str(caught.value))


def test_a_sync_generator_is_refused_at_construction_with_the_fix() -> None:
    def lifespan(server: MCPServer) -> Iterator[dict[str, int]]:
        yield {"db": 1}

    assert message_of(lifespan) == snapshot(
        "lifespan test_a_sync_generator_is_refused_at_construction_with_the_fix.<locals>.lifespan (FILE:LINE) is a sync generator, but the server enters its lifespan with `async with lifespan(server) as value`; write it as `async def` and decorate it with @contextlib.asynccontextmanager."
    )


def test_a_sync_context_manager_is_refused_with_the_fix() -> None:
    @contextmanager
    def lifespan(server: MCPServer) -> Iterator[None]:
        yield

    assert message_of(lifespan).endswith(
        "replace @contextmanager with @asynccontextmanager and write it as `async def`."
    )


def test_an_undecorated_async_generator_is_refused_with_the_fix() -> None:
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        yield

    assert "is an async generator" in message_of(lifespan)
    assert message_of(lifespan).endswith("decorate it with @contextlib.asynccontextmanager.")


def test_an_async_context_manager_is_accepted() -> None:
    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        yield

    assert MCPServer("x", lifespan=lifespan).name == "x"


def test_a_lifespan_that_is_not_callable_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="lifespan= takes a function of the server, got 3"):
        MCPServer("x", lifespan=3)  # type: ignore[arg-type]
