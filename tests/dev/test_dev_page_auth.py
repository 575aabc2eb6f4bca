"""The dev page of a server with bearer auth: the token and headers it sends, templates, progress."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from devprocess import start_dev, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow

GOOD = "matrix-good-token"


@pytest.fixture(scope="module")
def auth_page_url() -> Iterator[str]:
    process, url = start_dev("tests/compose/compose_server.py")
    yield url
    stop(process)


@pytest.fixture
def signed_in(page: Page) -> Page:
    """The page with the token already entered in this tab (a 401 while listing is a console error)."""
    page.add_init_script(f"sessionStorage.setItem('mcpdi-dev-token', {GOOD!r})")
    return page


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_the_token_and_headers_are_sent_with_every_request(
    signed_in: Page, auth_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    page = signed_in
    page.goto(auth_page_url)
    page.get_by_label(era, exact=False).check()
    expect(page.locator("body")).to_have_attribute("data-ready", era)
    page.get_by_label("Headers").fill("X-Tenant: acme")
    page.get_by_label("Headers").blur()  # a change: the page lists again with the new headers
    expect(page.locator("body")).to_have_attribute("data-ready", era)
    page.locator('#tools button[data-name="header"]').click()
    page.get_by_role("textbox", name="name (required)").fill("x-tenant")
    page.get_by_role("button", name="Call header").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text("acme")


def test_a_resource_template_is_listed_and_read_with_its_variables(
    signed_in: Page, auth_page_url: str
) -> None:
    from playwright.sync_api import expect

    page = signed_in
    page.goto(auth_page_url)
    expect(page.locator("body")).to_have_attribute("data-ready", "2026-07-28")
    page.locator('#templates button[data-name="notes://{name}"]').click()
    page.get_by_role("textbox", name="name (required)").fill("shopping")
    page.get_by_role("button", name="Read notes://{name}").click()
    expect(page.locator("#outcome-body")).to_contain_text('"text": "the note shopping"')


def test_the_progress_a_tool_reports_is_shown_as_it_comes(signed_in: Page, auth_page_url: str) -> None:
    from playwright.sync_api import expect

    page = signed_in
    page.goto(auth_page_url)
    expect(page.locator("body")).to_have_attribute("data-ready", "2026-07-28")
    page.locator('#tools button[data-name="count"]').click()
    page.get_by_role("button", name="Call count").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text("counted to 2")
    expect(page.locator("#rounds li")).to_contain_text(["Progress 1/2: step 1", "Progress 2/2: step 2"])


def test_without_a_token_the_page_says_the_server_wants_one(browser: Browser, auth_page_url: str) -> None:
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    page.goto(auth_page_url)
    expect(page.locator("#tools li")).to_contain_text(
        "cannot list: HTTP 401: the server wants a bearer token (enter it under Bearer token) "
        f'Bearer resource_metadata="{auth_page_url}.well-known/oauth-protected-resource/mcp"',
        timeout=15_000,
    )
    context.close()
