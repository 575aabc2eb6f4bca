"""Real servers for the interop tests: uvicorn on 127.0.0.1 (a free port) and stdio subprocesses."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator

import pytest
from interop_servers import SERVERS, mcpdi_app, python_command, sdk_app, serve_app


@pytest.fixture
async def sdk_http_url() -> AsyncGenerator[str]:
    """The official SDK's test server over Streamable HTTP (SSE mode)."""
    async with serve_app(sdk_app()) as url:
        yield url


@pytest.fixture
async def mcpdi_http_url() -> AsyncGenerator[str]:
    """mcpdi's test server over Streamable HTTP (SSE mode)."""
    async with serve_app(mcpdi_app()) as url:
        yield url


@pytest.fixture
def sdk_stdio_command() -> list[str]:
    """The argv that serves the official SDK's test server on stdio."""
    return python_command(SERVERS / "sdk_server.py")


@pytest.fixture
def mcpdi_stdio_command() -> list[str]:
    """The argv that serves mcpdi's test server on stdio."""
    return [sys.executable, "-m", "mcpdi_transport", "run", str(SERVERS / "mcpdi_server.py")]
