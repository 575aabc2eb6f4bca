"""`mcpdi/testing/__init__.py` is a curated front door: `__all__` is exactly what it exports."""

from __future__ import annotations

import types

import mcpdi.testing as kit


def test_all_lists_exactly_the_public_names_of_the_test_kit() -> None:
    public = {
        name
        for name, value in vars(kit).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert isinstance(kit.__all__, tuple)
    assert set(kit.__all__) == public
    assert list(kit.__all__) == sorted(kit.__all__)


def test_the_kit_offers_overrides_scripted_answers_and_the_in_memory_client() -> None:
    expected = {"override", "Overrides", "ScriptedClient", "accept", "decline", "cancel", "sampled", "roots"}
    assert expected | {"InMemoryClient", "AskedQuestion", "UnexpectedQuestion"} <= set(kit.__all__)
