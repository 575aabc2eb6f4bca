"""`built_fast`: a frozen slotted dataclass whose instances are built without a call per field.

A frozen dataclass's `__init__` sets each field with `object.__setattr__(self, name, value)`,
because its own `__setattr__` refuses: a method call per field, most of the cost of building
a small record. Registration builds several such records for every step of every tool, so
these classes are built by a `__new__` that fills a twin class without the refusal (the same
slots: a subclass that adds none) with plain attribute stores, then gives the instance its
real class. What the dataclass decided stays as it is: fields, defaults, equality, hashing,
`repr`, `dataclasses.replace`, and instances refuse assignment once built. A subclass is built
the ordinary way: `object.__new__`, then its own `__init__` or the dataclass's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ("built_fast",)

_Record = TypeVar("_Record", bound=type[Any])
_NO_VALUE = object()  # a parameter left out whose field has a default factory


def built_fast(cls: _Record) -> _Record:
    """`cls` (a `@dataclass(frozen=True, slots=True)`) built by a generated `__new__`.

    The generated `__new__` builds exactly `cls`'s layout; a subclass gets the ordinary
    construction back when it is defined (`_built_plainly`).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        msg = f"built_fast needs a @dataclass(frozen=True, slots=True) class, got {cls.__qualname__}"
        raise TypeError(msg)
    if hasattr(cls, "__post_init__") or any(
        f._field_type is dataclasses._FIELD_INITVAR  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        for f in cls.__dataclass_fields__.values()
    ):
        msg = f"built_fast does not run __post_init__ or take InitVar fields ({cls.__qualname__})"
        raise TypeError(msg)
    building = type(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
            "__module__": cls.__module__,
        },
    )
    namespace: dict[str, Any] = {
        "_object_new": object.__new__,
        "_cls": cls,
        "_building": building,
        "_NO_VALUE": _NO_VALUE,
    }
    positional: list[str] = []
    keyword_only: list[str] = []
    stores: list[str] = []
    for f in dataclasses.fields(cls):
        name = f.name
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = f.default
            default = f"_default_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            default = "_NO_VALUE"
        else:
            default = None
        if not f.init:
            if default == "_NO_VALUE":
                stores.append(f"    __record_self__.{name} = _factory_{name}()")
            elif default is not None:
                stores.append(f"    __record_self__.{name} = {default}")
            continue
        (keyword_only if f.kw_only else positional).append(name if default is None else f"{name}={default}")
        if default == "_NO_VALUE":
            stores.append(
                f"    __record_self__.{name} = _factory_{name}() if {name} is _NO_VALUE else {name}"
            )
        else:
            stores.append(f"    __record_self__.{name} = {name}")
    signature = ", ".join(["__record_cls__", *positional, *(["*", *keyword_only] if keyword_only else [])])
    source = "\n".join(
        [
            f"def __new__({signature}):",
            "    __record_self__ = _object_new(_building)",
            *stores,
            "    __record_self__.__class__ = _cls",
            "    return __record_self__",
        ]
    )
    exec(compile(source, f"<built_fast {cls.__qualname__}>", "exec"), namespace)
    new = namespace["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    new.__module__ = cls.__module__
    record: Any = cls  # its construction is replaced, which its declared type does not allow
    dataclass_init = record.__init__

    def plain_new(subclass: type[Any], *args: Any, **kwargs: Any) -> Any:
        instance = object.__new__(subclass)
        if subclass.__init__ is object.__init__:  # no `__init__` of its own: the record's
            dataclass_init(instance, *args, **kwargs)
        return instance

    def built_plainly(subclass: type[Any], **kwargs: Any) -> None:
        """A subclass (its own layout, maybe its own fields) is built as Python builds any
        object: `object.__new__`, then its `__init__`, or the record's dataclass one if it has none."""
        super(cls, subclass).__init_subclass__(**kwargs)
        if "__new__" not in subclass.__dict__:
            sub: Any = subclass
            sub.__new__ = staticmethod(plain_new)

    record.__new__ = staticmethod(new)
    # `__new__` has built the instance: the call's arguments are not read twice.
    record.__init__ = object.__init__
    record.__reduce__ = _reduce
    record.__init_subclass__ = classmethod(built_plainly)
    return cls


def _reduce(record: Any) -> tuple[Any, ...]:
    """Copies and pickles rebuild a record from its field values, not by calling `__new__` bare."""
    values = {f.name: getattr(record, f.name, _NO_VALUE) for f in dataclasses.fields(record)}
    return (_rebuild, (type(record), values))


def _rebuild(cls: type[Any], values: dict[str, Any]) -> Any:
    record = object.__new__(cls)
    for name, value in values.items():
        if value is not _NO_VALUE:  # a field no default set, left unset as it was
            object.__setattr__(record, name, value)
    return record
