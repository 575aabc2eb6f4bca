"""The engine's front door: exactly the curated names, and plans frozen once compiled."""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated

import pytest

import mcpdi.engine
from mcpdi.engine import Resolve, compile_plan


def test_all_lists_exactly_the_public_names_the_engine_exports() -> None:
    assert isinstance(mcpdi.engine.__all__, tuple)
    for name in mcpdi.engine.__all__:  # first, so that the names loaded on first use are there
        assert getattr(mcpdi.engine, name) is not None
    exported = {name for name in vars(mcpdi.engine) if not name.startswith("_")}
    modules = {name for name, value in vars(mcpdi.engine).items() if type(value) is type(sys)}
    assert sorted(mcpdi.engine.__all__) == sorted(exported - modules)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'mcpdi\.engine' has no attribute 'explainer'"):
        _ = mcpdi.engine.explainer  # type: ignore[attr-defined]


def stock(title: str) -> int:
    return 1


async def tool(title: str, n: Annotated[int, Resolve(stock)]) -> int:
    return n


def test_a_plan_and_its_steps_are_frozen() -> None:
    plan = compile_plan(tool)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.steps[0].key = "x"  # type: ignore[misc]
    assert isinstance(plan.steps, tuple)


def test_a_step_describes_its_resolver_for_messages_and_tools() -> None:
    step = compile_plan(tool).steps[0]
    assert step.name == "stock"
    assert step.qualname == f"{__name__}:stock"
    assert step.location == f"tests/engine/test_engine_api.py:{stock.__code__.co_firstlineno}"
    assert step.fn is stock
    assert (step.is_async, step.inline) == (False, False)
    assert [b.parameter for b in step.bindings] == ["title"]


def test_the_resolve_marker_is_frozen_and_defaults_to_a_worker_thread() -> None:
    marker = Resolve(stock)
    assert marker.inline is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        marker.inline = True  # type: ignore[misc]


@dataclasses.dataclass
class Settings:
    title: str

    def describe(self) -> str:
        return self.title


async def tool_with_settings(settings: Annotated[Settings, Resolve(Settings)], title: str) -> str:
    return settings.title


def test_a_class_resolver_with_a_generated_init_is_located_in_its_own_file() -> None:
    step = compile_plan(tool_with_settings).steps[0]
    assert step.location == f"tests/engine/test_engine_api.py:{Settings.describe.__code__.co_firstlineno}"
