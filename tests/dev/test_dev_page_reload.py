"""The page follows the server file: a saved change shows up, a broken save is reported and served around."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from devprocess import start_dev, stop
from test_dev_page_browser import WAIT_MS, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.slow

SHOP = """\
from mcpdi import MCPServer

mcp = MCPServer("Shop")


@mcp.tool()
def {name}() -> str:
    return "{name} ran"
"""


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_saved_change_is_listed_and_called_and_a_broken_save_is_reported(
    page: Page, tmp_path: Path, era: str
) -> None:
    from playwright.sync_api import expect

    server_file = tmp_path / "shop.py"
    server_file.write_text(SHOP.replace("{name}", "hello"))
    process, url = start_dev("shop.py", cwd=tmp_path)
    try:
        open_page(page, url, era)
        expect(page.locator("#tools button")).to_have_text(["hello"])
        page.locator('#tools button[data-name="hello"]').click()  # a session is open in the handshake era
        page.get_by_role("button", name="Call hello").click()
        expect(page.locator("#outcome-body pre.content")).to_have_text("hello ran")

        server_file.write_text(SHOP.replace("{name}", "goodbye"))
        expect(page.locator("#status")).to_have_text("Reloaded shop.py (version 2)", timeout=WAIT_MS)
        expect(page.locator("#tools button")).to_have_text(["goodbye"])
        page.locator('#tools button[data-name="goodbye"]').click()
        page.get_by_role("button", name="Call goodbye").click()
        expect(page.locator("#outcome-body pre.content")).to_have_text("goodbye ran")

        server_file.write_text("from mcpdi import MCPServer\nmcp = MCPServer(\n")
        expect(page.locator("#status")).to_have_text(
            "Reload failed, still serving version 2: cannot import shop.py "
            "(line 2: mcp = MCPServer(): SyntaxError: '(' was never closed",
            timeout=WAIT_MS,
        )
        page.screenshot(path=tmp_path / "reload-failed.png", full_page=True)
        page.get_by_role("button", name="Call goodbye").click()
        expect(page.locator("#outcome-body pre.content")).to_have_text("goodbye ran")
    finally:
        page.goto("about:blank")  # the page stops asking for the status before the server goes
        printed = stop(process)
    assert printed.splitlines()[1:] == [
        "mcpdi dev: reloaded shop.py (version 2)",
        "mcpdi dev: reload failed, still serving version 2: cannot import shop.py "
        "(line 2: mcp = MCPServer(): SyntaxError: '(' was never closed",
    ]
