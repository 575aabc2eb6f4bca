"""Plan parts equal across plans kept as one object: argument bindings, arguments, their tuples.

Every registered function keeps its plan while the server lives, and every object a plan holds
is one more for each full garbage collection to visit. Parts made only of atoms (names, flags,
builtin classes, defaults of an exact atomic type) are the same for many functions (`title: str`
in a hundred tools), so compile shares them. Frozen and equal, a shared part is
indistinguishable from a fresh one but for `is`. The table is bounded: past its size a part is
simply not shared. Its annotations are builtin classes only, so it never keeps an author's
class alive after the server that used it is gone.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from typing import Any, TypeVar

from mcpdi.engine._plan import Argument, ArgumentBinding, Binding

__all__ = ("shared_argument", "shared_argument_binding", "shared_arguments", "shared_bindings")

_Part = TypeVar("_Part")
_SIZE = 4096
_PARTS: dict[Hashable, Any] = {}
# Defaults that equal only themselves in an exact type (no 1 == True == 1.0, no -0.0 or NaN).
_ATOMIC_DEFAULTS = (str, int, bool, type(None))


def _shared(key: Hashable, part: _Part) -> _Part:
    found = _PARTS.get(key)
    if found is not None:
        return found
    if len(_PARTS) < _SIZE:
        _PARTS[key] = part
    return part


def shared_argument_binding(parameter: str, positional: bool, argument: str) -> ArgumentBinding:
    """`ArgumentBinding(parameter, positional, argument)`, shared with equal ones."""
    return _shared(
        (ArgumentBinding, parameter, positional, argument), ArgumentBinding(parameter, positional, argument)
    )


def shared_argument(
    name: str,
    annotation: Any,
    default: Any,
    kind: inspect._ParameterKind,  # pyright: ignore[reportPrivateUsage]  # the stdlib's own enum
) -> Argument:
    """`Argument(name, annotation, default, kind)`, shared with equal ones when it holds atoms only
    (a builtin class annotation; no default, or one of an exact `str`/`int`/`bool`/None type)."""
    argument = Argument(name, annotation, default, kind)
    if type(annotation) is not type or annotation.__module__ != "builtins":
        return argument
    if default is not inspect.Parameter.empty and type(default) not in _ATOMIC_DEFAULTS:
        return argument
    return _shared(_argument_key(argument), argument)


def shared_arguments(arguments: tuple[Argument, ...]) -> tuple[Argument, ...]:
    """The tuple of shared arguments, shared itself (keyed by their identities)."""
    if not arguments or not _all_shared(arguments):
        return arguments
    return _shared((tuple, Argument, *map(id, arguments)), arguments)


def shared_bindings(bindings: tuple[Binding, ...]) -> tuple[Binding, ...]:
    """A tuple of shared argument bindings only, shared itself; any other tuple as it is."""
    if not bindings or not _all_shared(bindings):
        return bindings
    return _shared((tuple, ArgumentBinding, *map(id, bindings)), bindings)


def _all_shared(parts: tuple[Any, ...]) -> bool:
    """Whether each part is the one kept in the table (then its identity is a stable key)."""
    return all(_is_shared(part) for part in parts)


def _is_shared(part: Any) -> bool:
    if type(part) is ArgumentBinding:
        return _PARTS.get((ArgumentBinding, part.parameter, part.positional, part.argument)) is part
    if type(part) is Argument:
        try:
            return _PARTS.get(_argument_key(part)) is part
        except TypeError:  # an unhashable annotation or default: never shared
            return False
    return False


def _argument_key(argument: Argument) -> tuple[Any, ...]:
    default: Any = argument.default
    kind: Any = type(default)  # pyright: ignore[reportUnknownVariableType]  # 1 == True: the type is part of the default
    return (Argument, argument.name, argument.annotation, kind, default, argument.kind)
