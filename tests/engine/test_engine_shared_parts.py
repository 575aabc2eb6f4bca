"""Plans share the parts equal across them (call arguments of builtin classes and their
bindings), and only those: a shared part equals the fresh one in value and in type."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pytest

import mcpdi.engine._shared
from mcpdi.engine import Plan, Resolve, compile_plan


def plan_of(source: str) -> Plan:
    """A plan of `tool` defined by `source` (a fresh function, as a new registration has)."""
    namespace: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve}
    exec(source, namespace)  # the test's own literal source
    return compile_plan(namespace["tool"], localns=namespace)


def test_equal_arguments_of_builtin_classes_are_one_object_across_plans() -> None:
    source = "def tool(title: str, count: int = 3, flag: bool = False, note: str | None = None): ...\n"
    first, second = plan_of(source), plan_of(source)
    assert first.fn is not second.fn
    assert first.bindings == second.bindings
    assert first.bindings is second.bindings
    assert first.arguments == second.arguments
    # `str | None` is not a class: that argument is equal but not shared, so neither is the tuple.
    assert [a is b for a, b in zip(first.arguments, second.arguments, strict=True)] == [
        True,
        True,
        True,
        False,
    ]
    assert first.arguments is not second.arguments
    plain = "def tool(title: str, count: int = 3): ...\n"
    assert plan_of(plain).arguments is plan_of(plain).arguments


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("1", "True"),  # 1 == True: the default's type tells them apart
        ("0", "False"),
        ("1", "1.0"),
        ("0.0", "-0.0"),
        ("'a'", "b'a'"),
    ],
)
def test_defaults_that_compare_equal_keep_their_own_type(one: str, other: str) -> None:
    first = plan_of(f"def tool(n: int = {one}): ...\n").arguments[0]
    second = plan_of(f"def tool(n: int = {other}): ...\n").arguments[0]
    assert (repr(first.default), type(first.default)) == (one, type(eval(one)))
    assert (repr(second.default), type(second.default)) == (other, type(eval(other)))


def test_an_authors_class_or_a_mutable_default_is_never_kept_by_the_table() -> None:
    class Book:
        pass

    namespace: dict[str, Any] = {"Book": Book}
    exec("def tool(book: Book, tags: list = []): ...\n", namespace)
    plan = compile_plan(namespace["tool"], localns=namespace)
    kept = mcpdi.engine._shared._PARTS.values()  # pyright: ignore[reportPrivateUsage]
    assert all(part is not argument for part in kept for argument in plan.arguments)
    assert not any(getattr(part, "annotation", None) is Book for part in kept)
    again = compile_plan(namespace["tool"], localns=namespace)
    assert again.arguments == plan.arguments
    assert again.arguments[0] is not plan.arguments[0]
    assert again.arguments[1].default is plan.arguments[1].default  # the function's own list


def test_a_resolved_parameter_and_its_arguments_bindings() -> None:
    source = (
        "def length(title: str) -> int:\n    return len(title)\n"
        "def tool(title: str, n: Annotated[int, Resolve(length)]): ...\n"
    )
    first, second = plan_of(source), plan_of(source)
    assert first.steps[0].bindings is second.steps[0].bindings  # `title` from the call, in both
    assert first.bindings != second.bindings  # each names its own resolver
    assert first.bindings[0] is second.bindings[0]


def test_past_the_tables_size_parts_are_fresh_and_still_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcpdi.engine._shared, "_PARTS", {})
    monkeypatch.setattr(mcpdi.engine._shared, "_SIZE", 2)
    first = plan_of("def tool(a: str, b: int): ...\n")  # its two bindings fill the table
    second = plan_of("def tool(a: str, b: int): ...\n")
    assert second.bindings == first.bindings
    assert [x is y for x, y in zip(first.bindings, second.bindings, strict=True)] == [True, True]
    assert second.bindings is not first.bindings  # the table had no room for the tuple
    assert second.arguments == first.arguments
    assert second.arguments[0] is not first.arguments[0]
    assert [a.name for a in second.arguments] == ["a", "b"]
    assert len(mcpdi.engine._shared._PARTS) == 2  # pyright: ignore[reportPrivateUsage]


def test_a_shared_part_is_frozen() -> None:
    argument = plan_of("def tool(title: str): ...\n").arguments[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        argument.name = "other"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    assert dataclasses.replace(argument, name="other").name == "other"
    assert plan_of("def tool(title: str): ...\n").arguments[0].name == "title"
