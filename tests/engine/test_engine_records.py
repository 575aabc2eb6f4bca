"""A record built fast is the frozen dataclass it was declared as: same fields, same refusals."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any, ClassVar

import pytest
from inline_snapshot import snapshot

import mcpdi.engine._analyse
import mcpdi.engine._annotations
import mcpdi.engine._callables
import mcpdi.engine._plan
from mcpdi._arguments import ArgumentsPlan
from mcpdi._tools._compiled import RegisteredTool
from mcpdi.engine._records import built_fast
from mcpdi.lowlevel import ServerRequestContext


def record_class(name: str) -> type[Any]:
    """A frozen slotted dataclass with every kind of field; one class per call."""

    class Record:
        name: str
        count: int
        tags: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=lambda: [], compare=False)
        hidden: int = field(default=7, init=False)
        made: list[int] = field(default_factory=lambda: [1], init=False, repr=False, compare=False)
        flag: bool = field(default=False, kw_only=True)
        kind: ClassVar[str] = "record"

    Record.__name__ = Record.__qualname__ = name
    return dataclass(frozen=True, slots=True)(Record)


# The plain dataclass, built by its own `__init__`, to compare against, and the same built fast.
Declared = record_class("Declared")
Built = built_fast(record_class("Built"))


def values(record: Any) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("a", 1), {}),
        (("a", 1, ("x",)), {}),
        (("a", 1, ("x",), ["n"]), {"flag": True}),
        ((), {"name": "a", "count": 2, "notes": ["m"], "flag": True}),
    ],
)
def test_a_record_built_fast_holds_what_the_dataclass_would(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    declared = Declared(*args, **kwargs)
    built = Built(*args, **kwargs)
    assert type(built) is Built
    assert values(built) == values(declared)
    assert repr(built) == repr(declared).replace("Declared", "Built")
    assert built == Built(*args, **kwargs)
    assert hash(built) == hash(Built(*args, **kwargs))


def test_each_default_factory_gives_each_record_its_own_value() -> None:
    first, second = Built("a", 1), Built("b", 2)
    assert first.notes == []
    assert first.notes is not second.notes
    assert first.made == [1]
    assert first.made is not second.made


def test_a_built_record_refuses_assignment_and_deletion() -> None:
    built = Built("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "b"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del built.count  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    assert built.name == "a"
    assert built.count == 1


def test_replace_copy_deepcopy_and_pickle_give_equal_records() -> None:
    built = Built("a", 1, ("x",), ["n"], flag=True)
    replaced = dataclasses.replace(built, count=5)
    assert type(replaced) is Built
    assert replaced.count == 5
    assert replaced.tags == ("x",)
    assert replaced.flag
    for other in (copy.copy(built), copy.deepcopy(built), pickle.loads(pickle.dumps(built))):
        assert type(other) is Built
        assert values(other) == values(built)
    assert copy.deepcopy(built).notes is not built.notes


def test_wrong_arguments_are_refused_with_the_class_named() -> None:
    with pytest.raises(TypeError) as missing:
        Built("a")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    assert str(missing.value) == snapshot("Built.__new__() missing 1 required positional argument: 'count'")
    with pytest.raises(TypeError) as unknown:
        Built("a", 1, colour="red")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    assert str(unknown.value) == snapshot("Built.__new__() got an unexpected keyword argument 'colour'")
    with pytest.raises(TypeError) as not_init:
        Built("a", 1, hidden=3)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    assert str(not_init.value) == snapshot("Built.__new__() got an unexpected keyword argument 'hidden'")


@dataclass(slots=True)
class Mutable:
    name: str


@dataclass(frozen=True)
class WithDict:
    name: str


@dataclass(frozen=True, slots=True)
class PostInit:
    name: str

    def __post_init__(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class WithInitVar:
    name: str
    seed: InitVar[int]


def test_only_frozen_slotted_dataclasses_without_post_init_can_be_built_fast() -> None:
    texts: list[str] = []
    for cls in (Mutable, WithDict, PostInit, WithInitVar):
        with pytest.raises(TypeError) as refused:
            built_fast(cls)
        texts.append(str(refused.value))
    assert texts == snapshot(
        [
            "built_fast needs a @dataclass(frozen=True, slots=True) class, got Mutable",
            "built_fast needs a @dataclass(frozen=True, slots=True) class, got WithDict",
            "built_fast does not run __post_init__ or take InitVar fields (PostInit)",
            "built_fast does not run __post_init__ or take InitVar fields (WithInitVar)",
        ]
    )


class PlainSubclass(Built):
    """A subclass without fields or an `__init__` of its own: built by the record's dataclass one."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class FieldsSubclass(Built):
    """A dataclass subclass with a field of its own: built by its own `__init__`."""

    extra: str = "x"


def test_a_subclass_of_a_record_built_fast_is_built_as_any_dataclass_subclass() -> None:
    plain = PlainSubclass("a", 1, flag=True)
    assert type(plain) is PlainSubclass
    assert values(plain) == values(Built("a", 1, flag=True))
    more = FieldsSubclass("a", 1, ("t",), extra="y")
    assert type(more) is FieldsSubclass
    assert (more.name, more.tags, more.hidden, more.made, more.extra) == ("a", ("t",), 7, [1], "y")
    for record in (plain, more):
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.name = "b"
        assert dataclasses.replace(record, count=9).count == 9
        assert pickle.loads(pickle.dumps(record)) == record
    with pytest.raises(TypeError) as missing:
        PlainSubclass("a")
    assert str(missing.value) == snapshot("Built.__init__() missing 1 required positional argument: 'count'")
    assert type(Built("a", 1)) is Built  # the record itself is still built fast
    assert "__new__" in Built.__dict__


def _records_in(*modules: Any) -> list[type[Any]]:
    found = [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__ and dataclasses.is_dataclass(value)
    ]
    return [cls for cls in found if "__new__" in cls.__dict__]


def test_the_engines_records_are_built_fast_and_stay_frozen_dataclasses() -> None:
    records = _records_in(
        mcpdi.engine._plan, mcpdi.engine._analyse, mcpdi.engine._annotations, mcpdi.engine._callables
    )
    names = sorted(cls.__name__ for cls in records)
    assert names == snapshot(
        [
            "Adapter",
            "Argument",
            "ArgumentBinding",
            "ArgumentParam",
            "CallableInfo",
            "ContextBinding",
            "ContextParam",
            "Edge",
            "Marked",
            "Plan",
            "ResolvedBinding",
            "ResolvedParam",
            "Step",
        ]
    )
    for cls in [*records, ArgumentsPlan, RegisteredTool, ServerRequestContext]:
        params = cls.__dataclass_params__  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        assert params.frozen, cls  # pyright: ignore[reportUnknownMemberType]
        assert "__slots__" in cls.__dict__, cls
        assert "__new__" in cls.__dict__, cls
