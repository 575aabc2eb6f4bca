"""Parsed JSON values compared exactly and copied: what the per-request caches of the core key on."""

from __future__ import annotations

from typing import Any

__all__ = ("copy_json", "equality_is_exact", "same_json")

_ABSENT: Any = object()


def same_json(value: Any, known: Any) -> bool:
    """`value == known` where that is exact: the same JSON kinds all the way down (no `1 == True`)."""
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is not type(known):  # pyright: ignore[reportUnknownArgumentType]
        return False
    if kind is dict:
        if len(value) != len(known):
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            other = known.get(key, _ABSENT)
            if type(item) is str:  # most leaves: compared here rather than in a call per leaf
                if type(other) is not str or item != other:
                    return False
            elif not same_json(item, other):
                return False
        return True
    if kind is list:
        return len(value) == len(known) and all(same_json(a, b) for a, b in zip(value, known, strict=True))
    return kind in (str, int, bool, float, type(None)) and value == known


def equality_is_exact(known: Any) -> bool:
    """Whether `value == known` tells `same_json(value, known)` for a parsed JSON `value`.

    It does when `known` holds no number or boolean anywhere (only strings and nulls, in
    objects and arrays): `==` then cannot take unlike kinds for equal (no `1 == True`, no
    `1 == 1.0`), and a parsed value has only JSON's own types.
    """
    kind = type(known)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        return all(type(key) is str and equality_is_exact(item) for key, item in known.items())
    if kind is list:
        return all(equality_is_exact(item) for item in known)
    return kind is str or known is None


def copy_json(value: Any) -> Any:
    """A copy of JSON data: new dicts and lists all the way down, the same leaves."""
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    return value
