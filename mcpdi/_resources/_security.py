"""What a resource template's variables may hold before they reach the function: no path tricks."""

from __future__ import annotations

import string
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ("DEFAULT_RESOURCE_SECURITY", "ResourceSecurity", "escapes_its_root", "is_absolute_path")


def escapes_its_root(value: str) -> bool:
    """Whether `value`, read as a relative path (`/` or `\\` separated), climbs above its start.

    `a/../b` stays inside; `..`, `../x` and `a/../../b` do not. Dots inside a name (`1.0..2`)
    are not a `..` segment.
    """
    depth = 0
    for segment in value.replace("\\", "/").split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return True
        elif segment not in ("", "."):
            depth += 1
    return False


def is_absolute_path(value: str) -> bool:
    """Whether `value` is absolute on some platform: `/x`, `\\x`, `\\\\host\\share`, `C:\\x`, `C:x`.

    Joining such a value onto a base directory discards the base.
    """
    if value[:1] in ("/", "\\"):
        return True
    return len(value) >= 2 and value[1] == ":" and value[0] in string.ascii_letters


@dataclass(frozen=True, slots=True)
class ResourceSecurity:
    """Checks on the variables a URI template extracts, before the function is called.

    By default a value that climbs out of its directory (`..` segments), looks like an
    absolute path, or holds a NUL byte is refused, and the read is answered as for an
    unknown resource. Values are checked as they came and percent-decoded (`%2E%2E`), since a
    function may decode them. `exempt_params` names variables that legitimately hold such
    values (a git range `a..b` is fine already; `../x` is not); their function must check them.
    """

    reject_path_traversal: bool = True
    reject_absolute_paths: bool = True
    reject_null_bytes: bool = True
    exempt_params: frozenset[str] = field(default_factory=frozenset[str])

    def __init__(
        self,
        *,
        reject_path_traversal: bool = True,
        reject_absolute_paths: bool = True,
        reject_null_bytes: bool = True,
        exempt_params: Iterable[str] = (),
    ) -> None:
        if isinstance(exempt_params, str):
            msg = (
                f"ResourceSecurity(exempt_params={exempt_params!r}) takes a collection of names; "
                f"write exempt_params={{{exempt_params!r}}}"
            )
            raise TypeError(msg)
        object.__setattr__(self, "reject_path_traversal", reject_path_traversal)
        object.__setattr__(self, "reject_absolute_paths", reject_absolute_paths)
        object.__setattr__(self, "reject_null_bytes", reject_null_bytes)
        object.__setattr__(self, "exempt_params", frozenset(exempt_params))

    def rejected_parameter(self, values: Mapping[str, str]) -> str | None:
        """The first variable whose value the policy refuses, or None when all pass."""
        for name, value in values.items():
            if name in self.exempt_params:
                continue
            decoded = urllib.parse.unquote(value)
            if self._refuses(value) or (decoded != value and self._refuses(decoded)):
                return name
        return None

    def _refuses(self, value: str) -> bool:
        return (
            (self.reject_null_bytes and "\x00" in value)
            or (self.reject_path_traversal and escapes_its_root(value))
            or (self.reject_absolute_paths and is_absolute_path(value))
        )


DEFAULT_RESOURCE_SECURITY = ResourceSecurity()
"""Traversal, absolute paths and NUL bytes refused in every variable."""
