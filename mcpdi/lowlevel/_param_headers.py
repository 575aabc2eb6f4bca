"""The `x-mcp-header` rules: which tool arguments travel as `Mcp-Param-*` headers, and how."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

__all__ = (
    "MCP_PARAM_PREFIX",
    "X_MCP_HEADER",
    "HeaderParam",
    "HeaderRules",
    "HeaderType",
    "MalformedHeaderValue",
    "decode_header_value",
    "encode_header_value",
    "find_invalid_x_mcp_header",
    "mcp_param_headers",
    "validate_mcp_param_headers",
    "x_mcp_header_params",
)

X_MCP_HEADER: Final = "x-mcp-header"
MCP_PARAM_PREFIX: Final = "Mcp-Param-"

HeaderType: TypeAlias = Literal["string", "integer", "boolean"]
_HEADER_TYPES: Final[frozenset[str]] = frozenset({"string", "integer", "boolean"})

# RFC 9110 §5.6.2: a field name is 1*tchar.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Numbers the spec lets a receiver compare numerically; exponents never qualify.
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_MAX_SAFE_INTEGER: Final = 2**53 - 1
_SENTINEL_START: Final = "=?base64?"
_SENTINEL_END: Final = "?="

# JSON Schema keywords whose values are schema positions, by value shape. Crossing any of
# them leaves the pure `properties` chain. Data keywords (`const`, `default`, `enum`,
# `examples`) are never entered and `$ref` is never followed.
_SCHEMA_OR_SCHEMAS: Final = frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
        "allOf",
        "anyOf",
        "oneOf",
    }
)
_SCHEMA_MAPS: Final = frozenset(
    {"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)


class MalformedHeaderValue(ValueError):
    """A `=?base64?…?=` header value whose payload is not canonical Base64 of UTF-8 text."""

    def __init__(self, raw: str, problem: str) -> None:
        self.raw = raw
        self.problem = problem
        super().__init__(f"header value {raw!r} carries a malformed base64 sentinel: {problem}")


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One argument mirrored as a header: `header_name` is `Mcp-Param-` + the token as spelled."""

    header_name: str
    path: tuple[str, ...]
    json_type: HeaderType

    @property
    def token(self) -> str:
        return self.header_name[len(MCP_PARAM_PREFIX) :]

    @property
    def argument(self) -> str:
        """The property path as messages name it (`region`, `filter.region`)."""
        return ".".join(self.path)


HeaderRules: TypeAlias = Mapping[str, Any] | Sequence[HeaderParam]
"""A tool's `inputSchema`, or the `HeaderParam`s already read from it (cheaper per request)."""


def _schema_positions(root: object) -> Iterator[tuple[tuple[str, ...] | None, Mapping[str, Any]]]:
    """Yield `(properties path or None, schema)` for every schema position under `root`.

    The path is the chain of `properties` keys from the root, or None once any other
    applicator was crossed. An explicit stack keeps deep schemas from exhausting recursion.
    """
    stack: list[tuple[tuple[str, ...] | None, object]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        schema = cast("Mapping[str, Any]", node)
        yield path, schema
        for keyword, value in schema.items():
            if keyword == "properties" and isinstance(value, Mapping):
                for name, sub in cast("Mapping[str, Any]", value).items():
                    stack.append((None if path is None else (*path, name), sub))
            elif keyword in _SCHEMA_OR_SCHEMAS:
                if isinstance(value, list):
                    stack.extend((None, sub) for sub in cast("list[Any]", value))
                else:
                    stack.append((None, value))
            elif keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
                stack.extend((None, sub) for sub in cast("Mapping[str, Any]", value).values())


def _unsafe_integer_keyword(schema: Mapping[str, Any]) -> str | None:
    """The first of `const`/`default`/`enum` that names an integer beyond ±(2^53−1)."""
    for keyword in ("const", "default"):
        value = schema.get(keyword)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SAFE_INTEGER:
            return keyword
    members = schema.get("enum")
    if isinstance(members, list):
        for value in cast("list[Any]", members):
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SAFE_INTEGER:
                return "enum"
    return None


def find_invalid_x_mcp_header(input_schema: Mapping[str, Any]) -> str | None:
    """Return why an `x-mcp-header` marking in `input_schema` is invalid, or None if all are valid.

    A marking is valid on a property reached from the root through `properties` alone, whose
    value is an RFC 9110 token unique (case-insensitively) in the schema, and whose `type` is
    the single string `string`, `integer` or `boolean`. A schema that is not a mapping has no
    markings.
    """
    seen: dict[str, str] = {}
    for path, schema in _schema_positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            return f"{X_MCP_HEADER} found at a schema position not reachable via a pure `properties` chain"
        where = ".".join(path)
        token = schema[X_MCP_HEADER]
        if not isinstance(token, str):
            return f"property {where!r}: {X_MCP_HEADER} must be a string, not {type(token).__name__}"
        if not _TOKEN.fullmatch(token):
            return f"property {where!r}: {X_MCP_HEADER} {token!r} is not an RFC 9110 token"
        json_type = schema.get("type")
        if not isinstance(json_type, str):
            return (
                f"property {where!r}: {X_MCP_HEADER} is only permitted on integer/string/boolean "
                f"properties (the type keyword is {type(json_type).__name__}, not a string)"
            )
        if json_type not in _HEADER_TYPES:
            return (
                f"property {where!r}: {X_MCP_HEADER} is only permitted on integer/string/boolean "
                f"properties (got {json_type!r})"
            )
        if json_type == "integer" and (keyword := _unsafe_integer_keyword(schema)) is not None:
            return (
                f"property {where!r}: {X_MCP_HEADER} is only permitted on integers within "
                f"±(2^53−1), but its {keyword} lies outside"
            )
        folded = token.lower()
        if folded in seen:
            return f"{X_MCP_HEADER} {token!r} on property {where!r} duplicates property {seen[folded]!r}"
        seen[folded] = where
    return None


def x_mcp_header_params(input_schema: Mapping[str, Any]) -> tuple[HeaderParam, ...]:
    """The arguments `input_schema` mirrors as headers, in schema order.

    An invalid schema (see `find_invalid_x_mcp_header`) mirrors nothing: clients drop such a
    tool, and servers do not check its headers.
    """
    if find_invalid_x_mcp_header(input_schema) is not None:
        return ()
    params = [
        HeaderParam(MCP_PARAM_PREFIX + schema[X_MCP_HEADER], path, schema["type"])
        for path, schema in _schema_positions(input_schema)
        if path and X_MCP_HEADER in schema
    ]
    params.reverse()  # the walk pops the last property first
    return tuple(params)


def _is_sentinel_shaped(text: str) -> bool:
    return (
        len(text) >= len(_SENTINEL_START) + len(_SENTINEL_END)
        and text.startswith(_SENTINEL_START)
        and text.endswith(_SENTINEL_END)
    )


def _is_plain(text: str) -> bool:
    return (
        all(" " <= char <= "~" for char in text)
        and not text.startswith(" ")
        and not text.endswith(" ")
        and not _is_sentinel_shaped(text)
    )


def encode_header_value(value: str | int | bool) -> str:
    """Render a value as the spec puts it in a header.

    Booleans as `true`/`false`, integers in decimal, strings as they are when they are
    printable ASCII without edge spaces, else as `=?base64?<Base64 of UTF-8>?=` (which is also
    used for a string that itself looks like that sentinel). A string with lone surrogates
    has no UTF-8 form and raises `UnicodeEncodeError`.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if _is_plain(value):
        return value
    return _SENTINEL_START + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SENTINEL_END


def decode_header_value(raw: str) -> str:
    """Undo `encode_header_value` for a string: the sentinel's text, or `raw` itself.

    A value lacking either lowercase marker is a literal. Raises `MalformedHeaderValue` when
    the sentinel's payload is not canonical padded Base64 or not UTF-8.
    """
    if not _is_sentinel_shaped(raw):
        return raw
    payload = raw[len(_SENTINEL_START) : -len(_SENTINEL_END)]
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:
        raise MalformedHeaderValue(raw, "the payload is not Base64") from None
    # b64decode tolerates non-zero padding bits; the encoder never produces them.
    if base64.b64encode(data).decode("ascii") != payload:
        raise MalformedHeaderValue(raw, "the payload is not canonical Base64")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedHeaderValue(raw, "the payload is not UTF-8") from None


def _params_of(rules: HeaderRules) -> Sequence[HeaderParam]:
    if isinstance(rules, Mapping):
        return x_mcp_header_params(rules)
    return rules


def _value_at(arguments: Mapping[str, Any] | None, path: tuple[str, ...]) -> Any:
    """The argument at `path`, or None when a step is missing or not an object."""
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = cast("Mapping[str, Any]", node).get(key)
    return node


def _render(value: object, json_type: HeaderType) -> str | None:
    """The text a client mirrors for a body value, or None when it mirrors nothing."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if json_type == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            return str(value)
        except ValueError:  # beyond sys.get_int_max_str_digits()
            return None
    return None


def mcp_param_headers(rules: HeaderRules, arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """The `Mcp-Param-*` headers a client sends with `tools/call` for these arguments.

    Absent and `null` arguments (and values that are not scalars) send no header.
    """
    headers: dict[str, str] = {}
    for param in _params_of(rules):
        rendered = _render(_value_at(arguments, param.path), param.json_type)
        if rendered is not None:
            headers[param.header_name] = encode_header_value(rendered)
    return headers


def _matches(param: HeaderParam, value: object, rendered: str, decoded: str) -> bool:
    """Compare a decoded header with the body; integers compare by value (`5.0` is `5`)."""
    integral = (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )
    if param.json_type == "integer" and integral and _DECIMAL.fullmatch(decoded):
        whole, _, fraction = decoded.partition(".")
        try:
            return fraction.strip("0") == "" and int(whole) == int(cast("float", value))
        except ValueError:  # beyond sys.get_int_max_str_digits()
            return False
    return decoded == rendered


def validate_mcp_param_headers(
    rules: HeaderRules,
    arguments: Mapping[str, Any] | None,
    headers: Iterable[tuple[str, str]],
) -> str | None:
    """Check a `tools/call`'s `Mcp-Param-*` headers against its body arguments.

    `headers` are the request's (name, value) pairs, names in any case, repeats kept. Returns
    None when every marked argument and its header agree (both absent counts; `null` is
    absent; defaults do not count), else the `-32020` message for the first disagreement.
    Headers the schema does not mark are ignored.
    """
    params = _params_of(rules)
    if not params:
        return None
    wanted = {param.header_name.lower() for param in params}
    received: dict[str, list[str]] = {}
    for name, raw in headers:
        folded = name.lower()
        if folded in wanted:
            received.setdefault(folded, []).append(raw)
    for param in params:
        name = param.header_name
        raws = received.get(name.lower(), [])
        if len(raws) > 1:
            return f"{name} header appears more than once"
        raw = raws[0] if raws else None
        value = _value_at(arguments, param.path)
        argument = param.argument
        if value is None:
            if raw is not None:
                return f"{name} header is present but the request body's {argument!r} argument is absent"
            continue
        rendered = _render(value, param.json_type)
        if rendered is None:
            # A conforming client mirrors nothing for a non-scalar, so any header is wrong.
            if raw is not None:
                return f"{name} header does not match the request body's {argument!r} argument"
            continue
        if raw is None:
            return f"{name} header is missing but the request body's {argument!r} argument is present"
        try:
            decoded = decode_header_value(raw)
        except MalformedHeaderValue:
            return f"{name} header carries a malformed base64 sentinel value"
        if not _matches(param, value, rendered, decoded):
            return f"{name} header does not match the request body's {argument!r} argument"
    return None
