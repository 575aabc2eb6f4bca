"""The syntax check of a resource URI template, run at registration so a typo never reaches a client."""

from __future__ import annotations

import re

from mcpdi.engine import InvalidSignature

__all__ = ("check_uri_template",)

_NAME = re.compile(r"[A-Za-z0-9_]+")


def check_uri_template(template: str, *, location: str) -> None:
    """Raise `InvalidSignature` naming the position of the first malformed `{...}` in `template`."""
    seen: set[str] = set()
    position = 0
    while position < len(template):
        char = template[position]
        if char == "}":
            _fail(template, location, position, "a '}' without its '{'")
        if char != "{":
            position += 1
            continue
        end = template.find("}", position + 1)
        nested = template.find("{", position + 1)
        if end == -1 or (nested != -1 and nested < end):
            _fail(template, location, position, "a '{' that is never closed")
        name = template[position + 1 : end]
        if not name:
            _fail(template, location, position, "an empty '{}'")
        if not _NAME.fullmatch(name):
            _fail(template, location, position, f"{name!r} is not a variable name (letters, digits, '_')")
        if name in seen:
            _fail(template, location, position, f"the variable {name!r} appears twice")
        seen.add(name)
        position = end + 1


def _fail(template: str, location: str, position: int, problem: str) -> None:
    msg = f"Resource URI template {template!r} ({location}) is malformed at position {position}: {problem}"
    raise InvalidSignature(msg)
