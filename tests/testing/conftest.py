"""Both protocol eras for the test kit's tests."""

from __future__ import annotations

import pytest

ERAS = ("2025-11-25", "2026-07-28")


@pytest.fixture(params=ERAS, ids=["legacy", "modern"])
def protocol_version(request: pytest.FixtureRequest) -> str:
    return request.param
