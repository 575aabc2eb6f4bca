"""In-memory drivers for MCPServer tests: one scripted client per protocol era."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpdi import MCPServer
from mcpdi._in_memory._client import ALL_CAPABILITIES, InMemoryClient, Script

ERAS = ("2025-11-25", "2026-07-28")

Connect = Callable[..., Any]


@pytest.fixture(params=ERAS, ids=["legacy", "modern"])
def protocol_version(request: pytest.FixtureRequest) -> str:
    return request.param


def answers(elicit: Any = None, sample: Any = None, roots: Any = None) -> Script:
    """A script answering each kind of question with a fixed payload (or a callable of params)."""
    by_method = {"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots}

    def script(key: str | None, method: str, params: Mapping[str, Any] | None) -> Any:
        answer = by_method[method]
        if answer is None:
            msg = f"no scripted answer for {method}"
            raise AssertionError(msg)
        return answer(params) if callable(answer) else answer

    return script


@asynccontextmanager
async def connect(
    mcp: MCPServer[Any],
    protocol_version: str,
    *,
    script: Script | None = None,
    capabilities: Mapping[str, Any] = ALL_CAPABILITIES,
    headers: Mapping[str, str] | None = None,
) -> AsyncGenerator[InMemoryClient]:
    async with mcp.running() as runner:
        yield InMemoryClient(
            runner,
            protocol_version=protocol_version,
            capabilities=capabilities,
            script=script,
            headers=headers,
        )
