"""The dev page in a real headless Chromium: the bookshop's forms, calls and questions, in both eras."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.slow

ERAS = ["2025-11-25", "2026-07-28"]
ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 15_000


def open_page(page: Page, url: str, era: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.locator("body")).to_have_attribute("data-ready", "2026-07-28", timeout=WAIT_MS)
    page.get_by_label(era, exact=False).check()
    expect(page.locator("body")).to_have_attribute("data-ready", era, timeout=WAIT_MS)


def call_tool(page: Page, tool: str, title: str) -> None:
    page.locator(f'#tools button[data-name="{tool}"]').click()
    page.get_by_label("Title").fill(title)
    page.get_by_role("button", name=f"Call {tool}").click()


@pytest.mark.parametrize("era", ERAS)
def test_reserve_book_shows_one_field_and_its_result(
    page: Page, bookshop_page_url: str, era: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, era)
    page.locator('#tools button[data-name="reserve_book"]').click()
    fields = page.locator("#call-fields input, #call-fields select, #call-fields textarea")
    expect(fields).to_have_count(1)
    expect(fields).to_have_attribute("name", "title")
    page.screenshot(path=tmp_path / "1-reserve-form.png", full_page=True)

    call_tool(page, "reserve_book", "Dune")
    expect(page.locator("#outcome-body pre.content")).to_have_text("Reserved 'Dune' (6 copies left).")
    expect(page.locator("#outcome-body")).to_contain_text('"result": "Reserved')  # structuredContent
    page.screenshot(path=tmp_path / "2-reserve-result.png", full_page=True)


@pytest.mark.parametrize("era", ERAS)
def test_order_book_asks_the_person_and_orders_after_a_confirm(
    page: Page, bookshop_page_url: str, era: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, era)
    expect(page.get_by_label("Roots sent when asked")).to_have_value(ROOT.joinpath("examples").as_uri())
    page.get_by_label("Roots sent when asked").fill("file:///srv/bookshop")
    call_tool(page, "order_book", "Neuromancer")
    asking = page.locator("#asking")
    expect(asking).to_be_visible(timeout=WAIT_MS)
    expect(asking).to_contain_text("'Neuromancer' is out of stock (2-3 weeks). Order anyway?")
    confirm = asking.get_by_role("checkbox", name="Confirm")
    expect(confirm).to_be_focused()
    confirm.check()
    page.screenshot(path=tmp_path / "3-order-asks.png", full_page=True)
    asking.get_by_role("button", name="Accept").click()

    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Backordered 'Neuromancer'; it ships in 2-3 weeks.", timeout=WAIT_MS
    )
    expect(asking).to_be_hidden()
    rounds = page.locator("#rounds li")
    if era == "2026-07-28":
        expect(rounds).to_contain_text(
            ["Round 1: tools/call needs input", "answered accept", "Round 2: tools/call complete"]
        )
    else:
        expect(rounds).to_contain_text(
            ["During the call: elicitation/create asks", "answered accept", "Round 1: tools/call complete"]
        )
    page.locator("#raw summary").click()
    raw = page.locator("#raw-log")
    expect(raw).to_contain_text('"elicitation/create"')
    expect(raw).to_contain_text('"inputResponses"' if era == "2026-07-28" else '"action":"accept"')
    page.screenshot(path=tmp_path / "4-order-result.png", full_page=True)


@pytest.mark.parametrize("era", ERAS)
def test_declining_the_question_shows_the_error_that_names_the_parameter(
    page: Page, bookshop_page_url: str, era: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, era)
    call_tool(page, "order_book", "Neuromancer")
    asking = page.locator("#asking")
    expect(asking).to_be_visible(timeout=WAIT_MS)
    asking.get_by_role("button", name="Decline").click()

    expect(page.locator("#outcome-body")).to_contain_text(
        "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: "
        "elicitation was decline",
        timeout=WAIT_MS,
    )
    page.screenshot(path=tmp_path / "5-order-declined.png", full_page=True)


@pytest.mark.parametrize("era", ERAS)
def test_cancelling_a_question_the_tool_handles_itself_gives_its_answer(
    page: Page, bookshop_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, era)
    call_tool(page, "order_or_suggest", "Neuromancer")
    page.locator("#asking").get_by_role("button", name="Cancel").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "No backorder for 'Neuromancer'; 'Dune' is in stock today.", timeout=WAIT_MS
    )
    expect(page.locator("#rounds")).to_contain_text("answered cancel")


@pytest.mark.parametrize("era", ERAS)
def test_a_header_parameter_is_mirrored_so_the_server_accepts_the_call(
    page: Page, bookshop_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, era)
    page.locator('#tools button[data-name="stock_in_region"]').click()
    page.get_by_label("Title").fill("Dune")
    page.get_by_role("textbox", name="Region").fill("Zürich")  # not plain ASCII: sent Base64-encoded
    page.get_by_role("button", name="Call stock_in_region").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Dune: 3 copies in Zürich.", timeout=WAIT_MS
    )


def test_leaving_the_handshake_era_ends_its_session(page: Page, bookshop_page_url: str) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, "2025-11-25")
    with page.expect_response(lambda response: response.request.method == "DELETE") as ended:
        page.get_by_label("2026-07-28", exact=False).check()
    response = ended.value
    session = response.request.headers["mcp-session-id"]
    stale = page.request.post(
        f"{bookshop_page_url}mcp",
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        },
        data='{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    )
    assert (response.status, stale.status) == (200, 404)
    expect(page.locator("body")).to_have_attribute("data-ready", "2026-07-28")
