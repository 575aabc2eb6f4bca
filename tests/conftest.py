"""Shared test fixtures: the anyio backend, coverage in each xdist worker, a quick hypothesis profile."""

from __future__ import annotations

from typing import Any

import coverage
import pytest
from hypothesis import settings

_WORKER_COVERAGE = pytest.StashKey[coverage.Coverage]()

# `pytest --hypothesis-profile=quick`: every property test tries a tenth of its examples
# (tests/hypothesis_examples.py); the default and CI runs keep each test's own count.
settings.register_profile("quick", max_examples=10)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Under `coverage run -m pytest -n N`, each worker measures itself (one data file per process)."""
    node.workerinput["mcpdi_coverage"] = coverage.Coverage.current() is not None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    worker_input: dict[str, Any] = getattr(config, "workerinput", {})
    if worker_input.get("mcpdi_coverage"):
        # The settings are `coverage run`'s own ([tool.coverage] in pyproject.toml); `coverage combine`
        # merges the workers' files with the controller's. Server subprocesses stay unmeasured, as serially.
        measured = coverage.Coverage(data_suffix=True)
        measured.start()
        config.stash[_WORKER_COVERAGE] = measured


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Saved here, before the worker reports that it finished: the controller may end it any time after.
    measured = session.config.stash.get(_WORKER_COVERAGE, None)
    if measured is not None:
        measured.stop()
        measured.save()
