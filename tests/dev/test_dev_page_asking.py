"""The dev page answers sampling by hand and roots from its list, opens prompts and resources, by keyboard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_dev_page_browser import ERAS, WAIT_MS, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("era", ERAS)
def test_a_sampling_request_is_answered_by_hand(
    page: Page, asking_page_url: str, era: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.locator('#tools button[data-name="recommend_book"]').click()
    page.get_by_label("Genre").fill("cyberpunk")
    page.get_by_role("button", name="Call recommend_book").click()
    asking = page.locator("#asking")
    expect(asking).to_contain_text("user: Suggest one cyberpunk book title.", timeout=WAIT_MS)
    reply = asking.get_by_label("Reply as the model")
    expect(reply).to_be_focused()
    reply.fill("Neuromancer")
    asking.get_by_label("Model name").fill("a-person")
    page.screenshot(path=tmp_path / "sampling.png", full_page=True)
    asking.get_by_role("button", name="Send reply").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Today's cyberpunk pick: Neuromancer (by a-person)", timeout=WAIT_MS
    )


@pytest.mark.parametrize("era", ERAS)
def test_refusing_a_sampling_request_ends_the_call_with_an_error(
    page: Page, asking_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.locator('#tools button[data-name="recommend_book"]').click()
    page.get_by_label("Genre").fill("poetry")
    page.get_by_role("button", name="Call recommend_book").click()
    page.locator("#asking").get_by_role("button", name="Refuse").click()
    expect(page.locator("#outcome-body .error").first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#rounds")).to_contain_text("refused the sampling request")


@pytest.mark.parametrize("era", ERAS)
def test_the_roots_in_the_list_are_sent_when_the_server_asks(
    page: Page, asking_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.get_by_label("Roots sent when asked").fill("file:///srv/shelf-a\nfile:///srv/shelf-b")
    expect(page.get_by_label("Roots the page will send").locator("li")).to_have_text(
        ["file:///srv/shelf-a", "file:///srv/shelf-b"]
    )
    page.locator('#tools button[data-name="list_shelves"]').click()
    expect(page.locator("#call-fields [name]")).to_have_count(0)
    page.get_by_role("button", name="Call list_shelves").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Shelves: file:///srv/shelf-a, file:///srv/shelf-b", timeout=WAIT_MS
    )
    expect(page.locator("#rounds")).to_contain_text("roots/list answered with 2 root(s)")


@pytest.mark.parametrize("era", ERAS)
def test_prompts_and_resources_are_listed_and_opened(page: Page, asking_page_url: str, era: str) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.locator('#prompts button[data-name="review"]').click()
    page.get_by_label("title").fill("Dune")
    page.get_by_role("button", name="Get review").click()
    expect(page.locator("#outcome-body")).to_contain_text("Write a two-line review of Dune.", timeout=WAIT_MS)
    expect(page.locator("#graph-section")).to_be_hidden()

    page.locator('#resources button[data-name="books://catalogue"]').click()
    page.get_by_role("button", name="Read books://catalogue").click()
    expect(page.locator("#outcome-body")).to_contain_text("Dune\\nNeuromancer", timeout=WAIT_MS)


def test_the_graph_marks_the_resolver_that_asks(page: Page, asking_page_url: str) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, "2026-07-28")
    page.locator('#tools button[data-name="recommend_book"]').click()
    graph = page.get_by_role("img", name="Resolver graph of recommend_book; can ask: suggest_title")
    expect(graph).to_be_visible()
    expect(graph.locator("g.node.asks")).to_have_attribute("data-node", "suggest_title")
    expect(graph.locator("g.node")).to_have_count(3)
    expect(graph.locator("path.edge")).to_have_count(3)


def test_a_call_can_be_made_with_the_keyboard_alone(page: Page, bookshop_page_url: str) -> None:
    from playwright.sync_api import expect

    open_page(page, bookshop_page_url, "2026-07-28")
    target = page.locator('#tools button[data-name="reserve_book"]')
    for _ in range(20):  # the radio group, then the tool buttons, in document order
        page.keyboard.press("Tab")
        if target.evaluate("button => button === document.activeElement"):
            break
    expect(target).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Title")).to_be_focused()
    page.keyboard.type("Dune")
    page.keyboard.press("Enter")
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Reserved 'Dune' (6 copies left).", timeout=WAIT_MS
    )

    order = page.locator('#tools button[data-name="order_book"]')
    order.focus()
    page.keyboard.press("Enter")
    page.keyboard.type("Neuromancer")
    page.keyboard.press("Enter")
    confirm = page.locator("#asking").get_by_role("checkbox", name="Confirm")
    expect(confirm).to_be_focused(timeout=WAIT_MS)
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Backordered 'Neuromancer'; it ships in 2-3 weeks.", timeout=WAIT_MS
    )


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_error_and_a_protocol_error_are_shown_as_errors(
    page: Page, asking_page_url: str, era: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.locator('#tools button[data-name="hold_copies"]').click()
    page.get_by_label("Count").fill("5")
    page.get_by_role("button", name="Call hold_copies").click()
    expect(page.locator("#outcome-body p.error")).to_have_text("The tool reported an error:", timeout=WAIT_MS)
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Error executing tool hold_copies: cannot hold 5 copies; at most 3"
    )

    page.get_by_label("Count").fill("2")
    page.get_by_role("button", name="Call hold_copies").click()
    expect(page.locator("#outcome-body")).to_contain_text('"held": 2', timeout=WAIT_MS)

    page.locator('#prompts button[data-name="review"]').click()
    page.get_by_role("button", name="Get review").click()  # an empty title makes the prompt raise
    expect(page.locator("#outcome-body p.error")).to_have_text(
        "Error -32603: Error rendering prompt review", timeout=WAIT_MS
    )


def test_a_value_the_schema_cannot_take_is_refused_before_anything_is_sent(
    page: Page, asking_page_url: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, "2026-07-28")
    page.locator('#tools button[data-name="hold_copies"]').click()
    page.get_by_label("Count").fill("2.5")
    page.get_by_role("button", name="Call hold_copies").click()
    expect(page.locator("#outcome-body p.error")).to_have_text("Error: Count must be a whole number")
    page.get_by_label("Count").fill("")
    page.get_by_role("button", name="Call hold_copies").click()
    expect(page.locator("#outcome-body p.error")).to_have_text("Error: Count is required")
    expect(page.locator("#raw-log")).to_have_text("")


@pytest.mark.parametrize("era", ERAS)
def test_the_question_form_follows_the_requested_schema(page: Page, asking_page_url: str, era: str) -> None:
    from playwright.sync_api import expect

    open_page(page, asking_page_url, era)
    page.locator('#tools button[data-name="gift_wrap"]').click()
    page.get_by_label("Title").fill("Dune")
    page.get_by_role("button", name="Call gift_wrap").click()
    asking = page.locator("#asking")
    expect(asking).to_contain_text("How should 'Dune' be wrapped?", timeout=WAIT_MS)
    paper = asking.get_by_role("combobox", name="Paper")
    expect(paper.locator("option")).to_have_text(["red", "green", "gold"])
    paper.select_option(label="gold")
    asking.get_by_role("spinbutton", name="Ribbons").fill("9")
    asking.get_by_role("checkbox", name="Card").check()
    asking.get_by_role("textbox", name="Note").fill("Happy reading")
    asking.get_by_role("button", name="Accept").click()
    expect(asking.get_by_role("alert")).to_have_text("Ribbons must be at most 5")  # still asking
    asking.get_by_role("spinbutton", name="Ribbons").fill("2")
    asking.get_by_role("button", name="Accept").click()
    expect(page.locator("#outcome-body pre.content")).to_have_text(
        "Dune wrapped in gold with 2 ribbon(s), a card saying 'Happy reading'.", timeout=WAIT_MS
    )
