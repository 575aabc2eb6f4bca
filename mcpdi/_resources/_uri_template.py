"""Resource URI templates (RFC 6570, as the official SDK matches them): parsed once, matched per read.

`{name}` takes one segment, `{+path}` and `{#frag}` may span `/`, `{/seg}` and `{.ext}`
take their prefix, and a `{?q,lang}` tail matches the query leniently (any order,
absent names left out so the function's defaults apply, unknown names ignored).
Values are percent-decoded after the path checks of `ResourceSecurity` saw them raw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from mcpdi.engine import InvalidSignature

__all__ = ("InvalidUriTemplate", "UriMatcher", "UriTemplate", "decoded", "parse_uri_template")

_OPERATORS: Final = "+#./;?&"
_NAME: Final = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")
# operator -> (prefix before the first variable, separator between them, named, value class)
_SPECS: Final[Mapping[str, tuple[str, str, bool, str]]] = {
    "": ("", ",", False, r"[^/?#&,]*"),
    "+": ("", ",", False, r"[^?#]*"),
    "#": ("#", ",", False, r".*"),
    ".": (".", ".", False, r"[^./?#]*"),
    "/": ("/", "/", False, r"[^/?#]*"),
    ";": (";", ";", True, r"[^;/?#]*"),
    "?": ("?", "&", True, r"[^&#]*"),
    "&": ("&", "&", True, r"[^&#]*"),
}


class InvalidUriTemplate(InvalidSignature, ValueError):
    """A resource URI template that is malformed or cannot be matched; raised at registration.

    `template` is the template, `position` where the problem starts (None when it is not
    one place). The message starts with the official SDK's sentence for the same problem.
    """

    def __init__(self, message: str, *, template: str, position: int | None = None) -> None:
        super().__init__(message)
        self.template = template
        self.position = position


@dataclass(frozen=True, slots=True)
class Expression:
    operator: str
    names: tuple[str, ...]
    position: int


@dataclass(frozen=True, slots=True)
class UriTemplate:
    """A parsed template: literal text and expressions, in order."""

    template: str
    parts: tuple[str | Expression, ...]

    @property
    def variable_names(self) -> tuple[str, ...]:
        return tuple(name for part in self.parts if isinstance(part, Expression) for name in part.names)


def parse_uri_template(template: str, *, location: str) -> UriTemplate:
    """Parse `template`, raising `InvalidUriTemplate` for what the SDK refuses (and a stray `}`)."""
    parts: list[str | Expression] = []
    position = 0
    while position < len(template):
        brace = template.find("{", position)
        closing = template.find("}", position)
        if closing != -1 and (brace == -1 or closing < brace):
            _fail(
                template, location, closing, f"Unmatched '}}' at position {closing}", "a '}' without its '{'"
            )
        if brace == -1:
            parts.append(template[position:])
            break
        if brace > position:
            parts.append(template[position:brace])
        end = template.find("}", brace)
        if end == -1:
            _fail(
                template,
                location,
                brace,
                f"Unclosed expression at position {brace}",
                "a '{' that is never closed",
            )
        parts.append(_expression(template, location, template[brace + 1 : end], brace))
        position = end + 1
    parsed = UriTemplate(template, tuple(parts))
    _check_variables(parsed, location)
    return parsed


def _expression(template: str, location: str, body: str, position: int) -> Expression:
    if not body:
        _fail(template, location, position, f"Empty expression at position {position}", "an empty '{}'")
    operator = body[0] if body[0] in _OPERATORS else ""
    specs = body[len(operator) :]
    if not specs:
        sentence = f"Expression has operator but no variables at position {position}"
        _fail(template, location, position, sentence, f"'{{{operator}}}' names no variable")
    names: list[str] = []
    for spec in specs.split(","):
        if ":" in spec:
            sentence = f"Prefix modifier {{var:N}} is not supported (in {spec!r} at position {position})"
            _fail(template, location, position, sentence, "write the variable without ':N'")
        if spec.endswith("*"):
            sentence = f"Explode modifier on {{{operator}{spec}}} is not supported for matching"
            _fail(template, location, position, sentence, "write the variable without '*'")
        if not _NAME.fullmatch(spec):
            sentence = f"Invalid variable name {spec!r} at position {position}"
            _fail(
                template,
                location,
                position,
                sentence,
                f"{spec!r} is not a variable name (letters, digits, '_')",
            )
        names.append(spec)
    return Expression(operator, tuple(names), position)


def _check_variables(parsed: UriTemplate, location: str) -> None:
    template = parsed.template
    seen: set[str] = set()
    greedy = 0
    queries = 0
    previous: str | Expression | None = None
    for part in parsed.parts:
        if not isinstance(part, Expression):
            previous = part
            continue
        for name in part.names:
            if name in seen:
                sentence = f"Variable {name!r} appears more than once; repeated variables are not supported"
                _fail(template, location, part.position, sentence, f"the variable {name!r} appears twice")
            seen.add(name)
        if isinstance(previous, Expression) and _SPECS[part.operator][0] == "":
            sentence = (
                f"Variables {previous.names[-1]!r} and {part.names[0]!r} are adjacent with no literal "
                "separator; matching cannot determine where one ends and the other begins. Add a literal "
                "between them or use a single variable."
            )
            _fail(template, location, part.position, sentence, "two variables touch")
        greedy += part.operator in ("+", "#")
        queries += part.operator == "?"
        if greedy > 1:
            sentence = (
                "Template contains more than one multi-segment variable ({+var}, {#var}, or explode "
                "modifier); matching would be ambiguous"
            )
            _fail(template, location, part.position, sentence, "a second '{+...}' or '{#...}'")
        if queries > 1:
            sentence = (
                "Template contains more than one {?...} expression; use {?a,b} or {?a}{&b} for "
                "multiple query parameters"
            )
            _fail(template, location, part.position, sentence, "a second '{?...}'")
        previous = part


def _fail(template: str, location: str, position: int, sentence: str, problem: str) -> None:
    msg = (
        f"{sentence}. Resource URI template {template!r} ({location}) is malformed at position "
        f"{position}: {problem}"
    )
    raise InvalidUriTemplate(msg, template=template, position=position)


class UriMatcher:
    """Matches URIs against one template: the raw (still percent-encoded) value of each variable."""

    __slots__ = ("_path", "_query")

    def __init__(self, parsed: UriTemplate) -> None:
        path, query = _split_query_tail(parsed.parts)
        self._query = tuple(name for expression in query for name in expression.names)
        self._path = re.compile("".join(_regex(part) for part in path), re.DOTALL)

    def match(self, uri: str) -> dict[str, str] | None:
        if not self._query:
            found = self._path.fullmatch(uri)
            return None if found is None else {k: v for k, v in found.groupdict().items() if v is not None}
        path, _, query = uri.partition("#")[0].partition("?")
        found = self._path.fullmatch(path)
        if found is None:
            return None
        values = {k: v for k, v in found.groupdict().items() if v is not None}
        pairs: dict[str, str] = {}
        for pair in query.split("&") if query else ():
            name, _, value = pair.partition("=")
            pairs.setdefault(name, value)  # names are not decoded, so `%74oken=` cannot shadow `token`
        values.update((name, pairs[name]) for name in self._query if name in pairs)
        return values


def _split_query_tail(
    parts: tuple[str | Expression, ...],
) -> tuple[tuple[str | Expression, ...], list[Expression]]:
    """The path's parts, and the `{?...}{&...}` tail matched leniently (as the SDK decides it)."""
    split = len(parts)
    while split > 0:
        part = parts[split - 1]
        if not isinstance(part, Expression) or part.operator not in ("?", "&"):
            break
        split -= 1
    tail = [part for part in parts[split:] if isinstance(part, Expression)]
    if not tail or tail[0].operator != "?":
        return parts, []
    for part in parts[:split]:
        if ("?" in part or "#" in part) if isinstance(part, str) else part.operator in ("?", "#"):
            return parts, []  # a query the URI's `?` cannot split off: matched strictly
    return parts[:split], tail


def _regex(part: str | Expression) -> str:
    if isinstance(part, str):
        return re.escape(part)
    prefix, separator, named, value = _SPECS[part.operator]
    pieces: list[str] = []
    for name in part.names:  # identifiers: the function's parameters were checked against them
        capture = f"(?P<{name}>{value})"
        if not named:
            pieces.append(capture)
        elif part.operator == ";":
            pieces.append(f"{re.escape(name)}(?:={capture})?")  # `;name` alone is an empty value
        else:
            pieces.append(f"{re.escape(name)}={capture}")
    return re.escape(prefix) + re.escape(separator).join(pieces)


def decoded(values: Mapping[str, str]) -> dict[str, str]:
    """The variables' values percent-decoded, as the function receives them (`%20` is a space, `+` stays)."""
    return {name: unquote(value) for name, value in values.items()}
