"""Every Python snippet in docs/ and the README runs: the pages cannot drift from the code."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Pages of API reference, rendered from docstrings; they hold no snippets of their own.
WITHOUT_SNIPPETS = frozenset({"reference", "performance.md"})


def snippets(page: Path) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


def name_of(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]


def load_error_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_errors", DOCS / "gen_errors.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve postponed annotations through it
    spec.loader.exec_module(module)
    return module


def test_there_are_pages_with_snippets() -> None:
    assert {name_of(page) for page in PAGES} >= {
        "docs/index.md",
        "docs/getting-started.md",
        "docs/concepts.md",
        "docs/dependencies.md",
        "docs/header-parameters.md",
        "docs/errors.md",
        "docs/guides/engine.md",
        "README.md",
    }
    expected = [page for page in PAGES if not WITHOUT_SNIPPETS & {page.name, page.parent.name}]
    assert [name_of(page) for page in expected if not snippets(page)] == []


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_the_snippets_of_a_page_run_in_order(page: Path) -> None:
    # One namespace per page, like a reader following the page from top to bottom.
    # The page is a module in sys.modules, as a reader's file would be, so that pydantic and
    # typing can resolve postponed annotations by the module's name.
    stem = name_of(page).removesuffix(".md").replace("/", "_").replace("-", "_")
    module = ModuleType(f"docs_{stem}")
    sys.modules[module.__name__] = module
    try:
        for number, source in enumerate(snippets(page), start=1):
            code = compile(source, f"{page.name} snippet {number}", "exec")
            exec(code, module.__dict__)
    finally:
        del sys.modules[module.__name__]


def test_the_error_catalogue_is_the_page_its_tests_render() -> None:
    generator = load_error_generator()
    committed = (DOCS / "errors.md").read_text(encoding="utf-8")
    assert committed == generator.render(), "docs/errors.md is stale: run `python docs/gen_errors.py`"


def test_every_pinned_registration_error_has_a_fix_and_every_fix_a_pinned_error() -> None:
    generator = load_error_generator()
    cases = {case.key for case in generator.registration_cases()}
    assert sorted(cases - set(generator.FIXES)) == [], "add a fix to FIXES in docs/gen_errors.py"
    assert sorted(set(generator.FIXES) - cases) == [], "remove the fix of a case no test pins any more"


def test_the_error_catalogue_lists_every_wire_code_mcpdi_defines() -> None:
    import mcpdi.lowlevel

    generator = load_error_generator()
    defined = {
        getattr(mcpdi.lowlevel, name)
        for name in mcpdi.lowlevel.__all__
        if name.isupper() and isinstance(getattr(mcpdi.lowlevel, name), int)
    }
    assert defined <= set(generator.WIRE_CODES)
    page = (DOCS / "errors.md").read_text(encoding="utf-8")
    assert [code for code in sorted(defined) if f"### `{code}`" not in page] == []


def test_the_engine_guide_shows_the_transcript_the_plain_rpc_example_prints() -> None:
    page = (DOCS / "guides" / "engine.md").read_text(encoding="utf-8")
    shown = page.split("```text\n", 1)[1].split("```", 1)[0]
    printed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "plain_rpc.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert shown == printed


def test_every_place_that_builds_an_invalid_signature_is_in_the_catalogue() -> None:
    generator = load_error_generator()
    sites = list(generator.raise_sites())
    assert len(sites) >= 20  # the scan finds the packages' raise sites, not nothing
    pinned = [message for case in generator.registration_cases() for message in case.messages]
    page = (DOCS / "errors.md").read_text(encoding="utf-8")
    assert [site.where for site in generator.unpinned(sites, pinned) if site.template not in page] == []
