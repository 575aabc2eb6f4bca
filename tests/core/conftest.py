"""Fixtures for the core tests: a running low-level server and a recording peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from core_doubles import RecordingPeer, make_server

from mcpdi.lowlevel import Runner


@pytest.fixture
async def runner() -> AsyncIterator[Runner[Any]]:
    async with make_server().running() as running:
        yield running


@pytest.fixture
def peer() -> RecordingPeer:
    return RecordingPeer()
