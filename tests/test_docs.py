"""Every Python snippet in docs/ and the README runs: the pages cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).parent.parent / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def snippets(page: Path) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


PAGES = [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]


def test_there_are_pages_with_snippets() -> None:
    assert {page.name for page in PAGES} >= {
        "index.md",
        "dependencies.md",
        "header-parameters.md",
        "README.md",
    }
    assert all(snippets(page) for page in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_snippets_of_a_page_run_in_order(page: Path) -> None:
    # One namespace per page, like a reader following the page from top to bottom.
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for number, source in enumerate(snippets(page), start=1):
        code = compile(source, f"{page.name} snippet {number}", "exec")
        exec(code, namespace)
