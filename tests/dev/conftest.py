"""Fixtures for the dev page: `mcpdi dev` as a real process, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from devprocess import start_dev, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "make browser  (apt-get install -y chromium; pip install 'playwright>=1.40')"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def bookshop_page_url() -> Iterator[str]:
    process, url = start_dev("examples/bookshop.py")
    yield url
    stop(process)


@pytest.fixture(scope="module")
def asking_page_url() -> Iterator[str]:
    process, url = start_dev("tests/dev/dev_asking_server.py")
    yield url
    stop(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing; install it with: {INSTALL}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"Playwright's Python package is missing; install it with: {INSTALL}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    problems: list[str] = []
    # The page loads nothing from elsewhere: any request off the loopback origin is a problem.
    opened.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(("http://127.0.0.1:", "data:", "about:"))
            else problems.append(f"request to {request.url}")
        ),
    )
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    yield opened
    context.close()
    assert problems == []
