"""The modern (2026-07-28) per-request rules: the `_meta` envelope, the routing headers, result stamps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast, get_args

from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpdi.lowlevel._errors import HEADER_MISMATCH, INVALID_PARAMS, UNSUPPORTED_VERSION, MCPError
from mcpdi.lowlevel._json_values import copy_json, equality_is_exact, same_json
from mcpdi.lowlevel._jsonrpc import is_request_id
from mcpdi.lowlevel._param_headers import MalformedHeaderValue, decode_header_value

__all__ = (
    "ENVELOPE_KEYS",
    "LOG_LEVELS",
    "ROUTING_HEADERS",
    "Envelope",
    "check_modern_http_request",
    "check_routing",
    "describe_validation_error",
    "has_modern_envelope",
    "progress_token_of",
    "read_envelope",
    "stamp_modern_result",
    "unsupported_version",
)

LOG_LEVELS: Final[tuple[str, ...]] = get_args(LoggingLevel)
"""Syslog severities, least severe first."""

NAME_BEARING_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}

ROUTING_HEADERS: Final = ("mcp-protocol-version", "mcp-method", "mcp-name")
"""The routing headers a modern HTTP request repeats from its body (lower-cased)."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A request's validated 2026-07-28 `_meta` envelope."""

    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None
    log_level: str | None


def has_modern_envelope(params: Mapping[str, Any] | None) -> bool:
    """Whether a request claims the modern era: its `_meta` carries the protocol-version key.

    The key alone decides (not the full envelope), so a half-built envelope is still
    treated as modern and told which key is missing.
    """
    if not params:
        return False
    meta = params.get("_meta")
    return (type(meta) is dict or isinstance(meta, Mapping)) and PROTOCOL_VERSION_META_KEY in meta


def _envelope_meta(params: Mapping[str, Any] | None) -> Mapping[str, Any] | MCPError:
    meta = params.get("_meta") if params else None
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return MCPError(
            INVALID_PARAMS,
            "params._meta must be an object carrying the required "
            f"{PROTOCOL_VERSION_META_KEY!r} and {CLIENT_CAPABILITIES_META_KEY!r} envelope keys",
        )
    envelope = cast("Mapping[str, Any]", meta)
    if PROTOCOL_VERSION_META_KEY in envelope and CLIENT_CAPABILITIES_META_KEY in envelope:
        return envelope
    missing = [
        key for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if key not in envelope
    ]
    if missing:
        return MCPError(
            INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}"
        )
    return envelope


def _sent_envelope(params: Mapping[str, Any] | None) -> Mapping[str, Any] | MCPError:
    """`_envelope_meta`, its commonest case (a dict carrying both required keys) without its call."""
    meta = params.get("_meta") if params else None
    if type(meta) is dict and PROTOCOL_VERSION_META_KEY in meta and CLIENT_CAPABILITIES_META_KEY in meta:
        return cast("dict[str, Any]", meta)
    return _envelope_meta(params)


def unsupported_version(requested: str) -> MCPError:
    """`-32022` naming the versions the envelope can carry: exactly what `server/discover` lists,
    so a client can retry with any of them (handshake versions are reached through `initialize`)."""
    return MCPError(
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested},
    )


def _check_version(version: object) -> MCPError | None:
    if not isinstance(version, str):
        return MCPError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_PROTOCOL_VERSIONS:
        return unsupported_version(version)
    return None


def describe_validation_error(error: ValidationError, *, skip: int = 0) -> str:
    """`loc: msg` pairs of a pydantic error, without the offending input (never echoed)."""
    parts: list[str] = []
    for detail in error.errors(include_input=False, include_url=False):
        location = ".".join(str(part) for part in detail["loc"][skip:])
        parts.append(f"{location}: {detail['msg']}" if location else detail["msg"])
    return "; ".join(parts)


_ModelT = TypeVar("_ModelT", ClientCapabilities, Implementation)

_VALIDATED_LIMIT: Final = 256
_validated_models: dict[tuple[type, tuple[tuple[str, str], ...]], Any] = {}


def _validated(model: type[_ModelT], raw: object) -> _ModelT:
    """`model.model_validate(raw)`, cached for objects of strings only (most envelopes carry
    `{}` capabilities and a name/version client info, the same on every request).

    Such objects compare exactly, so an equal one validates to an equal model; the cached
    model is shared by the requests that sent it, as a handshake-era session shares its own.
    """
    key: tuple[tuple[str, str], ...] | None = None
    if type(raw) is dict:
        items = tuple(cast("dict[object, object]", raw).items())
        for name, value in items:  # a loop, not all(): this runs on every modern request
            if type(name) is not str or type(value) is not str:
                break
        else:
            key = cast("tuple[tuple[str, str], ...]", items)
            cached = _validated_models.get((model, key))
            if cached is not None:
                return cached
    validated = model.model_validate(raw, by_name=False)
    if key is not None:
        if len(_validated_models) >= _VALIDATED_LIMIT:
            _validated_models.clear()
        _validated_models[(model, key)] = validated
    return validated


ENVELOPE_KEYS: Final = (
    PROTOCOL_VERSION_META_KEY,
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
)
"""The `_meta` keys an `Envelope` is read from; the envelope depends on nothing else in `_meta`."""

_ABSENT: Any = object()


@dataclass(frozen=True, slots=True)
class _ReadEnvelope:
    """An envelope and (copies of) the values it was read from, `_ABSENT` for a key not sent."""

    version: str
    capabilities: Any
    client_info: Any
    log_level: Any
    envelope: Envelope
    by_equality: bool
    """No number or boolean in the values (`equality_is_exact`): `==` tells whether they fit."""

    def fits(self, meta: Mapping[str, Any]) -> bool:
        """Whether `meta` carries exactly these envelope values (`same_json`; absent is not null)."""
        version = meta[PROTOCOL_VERSION_META_KEY]  # present: `_envelope_meta` checked
        if type(version) is not str or version != self.version:
            return False
        if self.by_equality:  # `_ABSENT` equals itself alone
            return (
                meta[CLIENT_CAPABILITIES_META_KEY] == self.capabilities
                and meta.get(CLIENT_INFO_META_KEY, _ABSENT) == self.client_info
                and meta.get(LOG_LEVEL_META_KEY, _ABSENT) == self.log_level
            )
        if not same_json(meta[CLIENT_CAPABILITIES_META_KEY], self.capabilities):
            return False
        client_info = meta.get(CLIENT_INFO_META_KEY, _ABSENT)
        if client_info is not self.client_info and not same_json(client_info, self.client_info):
            return False  # (`is`: both absent; the copies are private, so nothing else is them)
        log_level = meta.get(LOG_LEVEL_META_KEY, _ABSENT)
        return log_level is self.log_level or same_json(log_level, self.log_level)


@dataclass(slots=True)
class _LastEnvelope:
    """The last envelope read and the values it was read from, replaced as one value."""

    read: _ReadEnvelope | None = None


_last_envelope: Final = _LastEnvelope()


def read_envelope(params: Mapping[str, Any] | None) -> Envelope | MCPError:
    """Validate a modern request's `_meta` envelope (rungs in the reference order, first failure wins).

    A client sends the same envelope on request after request, whatever else its `_meta`
    carries (a `progressToken` that changes every time): one whose envelope values equal
    the last ones read (exactly, `same_json`) gets that one's envelope (frozen, shared like
    its models). So the same `Envelope` object means the same envelope values, which lets
    the checks that follow remember their verdict by it (`tool_call_params_pass`).
    """
    meta = _sent_envelope(params)
    if isinstance(meta, MCPError):
        return meta
    last = _last_envelope.read
    if last is not None and last.fits(meta):
        return last.envelope
    envelope = _read_envelope(meta)
    if type(envelope) is Envelope and type(envelope.protocol_version) is str:
        capabilities = copy_json(meta[CLIENT_CAPABILITIES_META_KEY])
        client_info = copy_json(meta.get(CLIENT_INFO_META_KEY, _ABSENT))
        log_level = copy_json(meta.get(LOG_LEVEL_META_KEY, _ABSENT))
        exact = all(
            value is _ABSENT or equality_is_exact(value) for value in (capabilities, client_info, log_level)
        )
        _last_envelope.read = _ReadEnvelope(
            envelope.protocol_version, capabilities, client_info, log_level, envelope, exact
        )
    return envelope


def _read_envelope(meta: Mapping[str, Any]) -> Envelope | MCPError:
    version = meta[PROTOCOL_VERSION_META_KEY]
    if (problem := _check_version(version)) is not None:
        return problem
    try:
        capabilities = _validated(ClientCapabilities, meta[CLIENT_CAPABILITIES_META_KEY])
    except ValidationError as error:
        msg = f"params._meta[{CLIENT_CAPABILITIES_META_KEY!r}] is not a ClientCapabilities object: "
        return MCPError(INVALID_PARAMS, msg + describe_validation_error(error))
    client_info: Implementation | None = None
    if meta.get(CLIENT_INFO_META_KEY) is not None:
        try:
            client_info = _validated(Implementation, meta[CLIENT_INFO_META_KEY])
        except ValidationError as error:
            msg = f"params._meta[{CLIENT_INFO_META_KEY!r}] is not an Implementation object: "
            return MCPError(INVALID_PARAMS, msg + describe_validation_error(error))
    log_level = meta.get(LOG_LEVEL_META_KEY)
    if log_level is not None and log_level not in LOG_LEVELS:
        msg = f"params._meta[{LOG_LEVEL_META_KEY!r}] must be one of {', '.join(LOG_LEVELS)}"
        return MCPError(INVALID_PARAMS, msg)
    return Envelope(cast("str", version), capabilities, client_info, cast("str | None", log_level))


def progress_token_of(meta: Mapping[str, Any] | None) -> str | int | None:
    """The request's `_meta.progressToken` (a string or an integer; `true` is no token)."""
    token = meta.get("progressToken") if meta else None
    if is_request_id(token):  # the same rule as a JSON-RPC id
        return token
    return None


def _decode_name(raw: str | None) -> str | None:
    """The `Mcp-Name` value with its Base64 sentinel undone; None when absent or malformed."""
    if raw is None:
        return None
    try:
        return decode_header_value(raw)
    except MalformedHeaderValue:
        return None


def _name_matches(header: str | None, body_value: object) -> bool:
    """Whether the `Mcp-Name` header names `body_value` (most send it as it is: no decoding then)."""
    if header == body_value and not cast("str", header).startswith("=?"):
        return True  # a sentinel starts with `=?base64?`: anything else is its own value
    return _decode_name(header) == body_value


def _fold_headers(headers: Mapping[str, str | Sequence[str]]) -> tuple[dict[str, str], str | None]:
    """Single-valued routing headers, and the name of a routing header sent more than once."""
    folded: dict[str, str] = {}
    duplicated: str | None = None
    for name, value in headers.items():
        key = name.lower()
        if key not in ROUTING_HEADERS:
            continue
        values = [value] if isinstance(value, str) else list(value)
        if key in folded or len(values) > 1:
            duplicated = duplicated or key
        if values:
            folded[key] = values[0]
    return folded, duplicated


def check_modern_http_request(
    headers: Mapping[str, str | Sequence[str]], body: Mapping[str, Any]
) -> MCPError | None:
    """Check a modern HTTP request's routing headers and envelope against its body (protocol.md §2.6).

    Pure. `headers` are lower-cased names, a list where a header came more than once;
    `body` is one JSON-RPC request object. Rungs in the reference order, first failure
    wins: duplicated routing header (-32020), `_meta` carries version and capabilities
    (-32602), `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` equal the body (-32020),
    the version is a string (-32602) and served (-32022). `Mcp-Param-*` headers are the
    caller's next step (`validate_mcp_param_headers` with `Runner.tool_input_schema`).
    The runner runs these checks itself on a connection that carries the request's headers
    (`Connection.for_modern_request(http_headers=...)`).
    """
    folded, duplicated = _fold_headers(headers)
    raw_params = body.get("params")
    is_object = type(raw_params) is dict or isinstance(raw_params, Mapping)
    params = cast("Mapping[str, Any] | None", raw_params if is_object else None)
    return check_routing(folded, duplicated, body.get("method"), params)


def check_routing(
    folded: Mapping[str, str], duplicated: str | None, method: object, params: Mapping[str, Any] | None
) -> MCPError | None:
    """`check_modern_http_request` on headers already folded: the first value of each routing header,
    and the name of one sent more than once."""
    if duplicated is not None:
        return MCPError(HEADER_MISMATCH, f"{duplicated} header appears more than once")
    meta = _sent_envelope(params)
    if isinstance(meta, MCPError):
        return meta
    assert params is not None  # a valid `_meta` lives in params
    version = meta[PROTOCOL_VERSION_META_KEY]
    version_header = folded.get("mcp-protocol-version")
    if version_header is None or version_header != version:
        return MCPError(
            HEADER_MISMATCH,
            "mcp-protocol-version header does not match the request envelope's protocol version",
        )
    if folded.get("mcp-method") != method:
        return MCPError(HEADER_MISMATCH, "mcp-method header does not match the request body's method")
    name_key = NAME_BEARING_METHODS.get(method) if isinstance(method, str) else None
    if name_key is not None:
        body_value = params.get(name_key)
        if body_value is not None:
            header = folded.get("mcp-name")
            # Most send the name as it is (`_name_matches` without its call); a sentinel starts `=?`.
            same = header == body_value and type(header) is str and not header.startswith("=?")
            if not same and not _name_matches(header, body_value):
                return MCPError(
                    HEADER_MISMATCH,
                    f"mcp-name header does not match the request body's {name_key!r} parameter",
                )
    if type(version) is str and version in MODERN_PROTOCOL_VERSIONS:
        return None  # `_check_version` without its call
    return _check_version(version)


def stamp_modern_result(
    result: dict[str, Any], *, server_info: Mapping[str, Any], cacheable: bool, cache: bool = True
) -> dict[str, Any]:
    """Add what every 2026-07-28 result carries, keeping what the handler set.

    `resultType` ("complete" unless given), `_meta[serverInfo]`, and on complete results of
    cacheable methods `ttlMs` 0 / `cacheScope` "private". `cache=False` (a retry carrying
    `inputResponses`/`requestState`, which must not be cached) forces `ttlMs` to 0.
    """
    result.setdefault("resultType", "complete")
    if cacheable and result["resultType"] == "complete":
        result.setdefault("ttlMs", 0)
        result.setdefault("cacheScope", "private")
        if not cache:
            result["ttlMs"] = 0
            result["cacheScope"] = "private"
    raw_meta = result.get("_meta")
    if raw_meta is None:
        result["_meta"] = {SERVER_INFO_META_KEY: dict(server_info)}
    elif (
        isinstance(raw_meta, Mapping)
        and cast("Mapping[str, Any]", raw_meta).get(SERVER_INFO_META_KEY) is None
    ):
        result["_meta"] = {**cast("Mapping[str, Any]", raw_meta), SERVER_INFO_META_KEY: dict(server_info)}
    return result
