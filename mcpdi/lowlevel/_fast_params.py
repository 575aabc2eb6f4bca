"""Whether plain `tools/call` params pass the wire type of their version, known without pydantic.

`Runner` checks every spec request's params against the negotiated version's wire type before
validating them as the handler's params. For the commonest call (a string `name`, an object of
`arguments`, the same `_meta` as the previous call) that check is decided here: the wire
model's fields are validated independently (no validators, extra keys ignored), a `str` passes
a bare `str` field and a dict of string keys passes `dict[str, Any] | None`, and `_meta` is
validated by the wire type once per value. A 2026-07-28 `_meta` is split the same way: its
envelope values by the wire type once per envelope read (`read_envelope`), the rest by the
rules of its wire type's fields (an integer or string `progressToken`, extra keys allowed),
so a `progressToken` that changes on every call costs no validation. Anything else is left
to the wire type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import NoneType
from typing import TYPE_CHECKING, Any, Final, Optional, cast, get_args

from pydantic import BaseModel, ValidationError

from mcpdi.lowlevel._envelope import ENVELOPE_KEYS
from mcpdi.lowlevel._json_values import copy_json, same_json
from mcpdi.lowlevel._wire_methods import methods

if TYPE_CHECKING:
    from mcpdi.lowlevel._envelope import Envelope

__all__ = ("tool_call_params_pass",)

_KEYS: Final = frozenset({"name", "arguments", "_meta"})
_ABSENT: Any = object()  # `_meta` not sent
_ARGUMENTS_TYPE: Final[Any] = Optional[dict[str, Any]]  # noqa: UP045  # compared with the field's annotation
_TOKEN_KEY: Final = "progressToken"
_TOKEN_TYPES: Final = frozenset({str, int, NoneType})


@dataclass(frozen=True, slots=True)
class _MetaRules:
    """How the wire type of `_meta` reads the keys outside the envelope, when it is that simple:
    extra keys allowed (any value), one declared field besides the envelope, `progressToken`
    (`str | int | None`). `unsure` are the keys left to the wire type (its fields' names)."""

    unsure: frozenset[str]


@dataclass(slots=True)
class _Known:
    """The wire model of one version, the last `_meta` it passed and the last envelope whose
    values it passed (each replaced as one value)."""

    model: type[BaseModel]
    meta_rules: _MetaRules | None = None
    meta: tuple[Any, ...] = ()  # () or (a copy of the last `_meta` that passed,)
    envelope: Envelope | None = None


_known: dict[str, _Known | None] = {}


def _plain_fields(model: type[BaseModel]) -> bool:
    """Whether the model is what this module's rules assume (checked once per version)."""
    decorators = model.__pydantic_decorators__
    fields = model.model_fields
    name, arguments = fields.get("name"), fields.get("arguments")
    return (
        not decorators.model_validators
        and not decorators.field_validators
        and model.model_config.get("extra", "ignore") == "ignore"
        and name is not None
        and name.annotation is str
        and not name.metadata
        and name.alias in (None, "name")
        and arguments is not None
        and arguments.annotation == _ARGUMENTS_TYPE
        and not arguments.metadata
        and arguments.alias in (None, "arguments")
    )


def _meta_rules(model: type[BaseModel]) -> _MetaRules | None:
    """The rules of `model`'s `_meta` field outside the envelope, None when they are not `_MetaRules`."""
    field = model.model_fields.get("meta")
    meta_model = field.annotation if field is not None and field.alias == "_meta" else None
    if not (isinstance(meta_model, type) and issubclass(meta_model, BaseModel)):
        return None
    decorators = meta_model.__pydantic_decorators__
    if (
        decorators.model_validators
        or decorators.field_validators
        or decorators.validators
        or decorators.root_validators
    ):
        return None
    if meta_model.model_config.get("extra") != "allow":
        return None
    unsure: set[str] = set()
    for name, meta_field in meta_model.model_fields.items():
        unsure.add(name)
        if meta_field.validation_alias not in (None, meta_field.alias):
            return None
        if meta_field.alias in ENVELOPE_KEYS:
            continue
        if (
            meta_field.alias != _TOKEN_KEY
            or meta_field.metadata
            or frozenset(get_args(meta_field.annotation)) != _TOKEN_TYPES
        ):
            return None
    return _MetaRules(frozenset(unsure - {_TOKEN_KEY, *ENVELOPE_KEYS}))


def _known_for(version: str) -> _Known | None:
    if version in _known:
        return _known[version]
    request_type = methods().CLIENT_REQUESTS.get(("tools/call", version))
    field = request_type.model_fields.get("params") if request_type is not None else None
    model = field.annotation if field is not None else None
    known = None
    if isinstance(model, type) and issubclass(model, BaseModel) and _plain_fields(model):
        known = _Known(model, _meta_rules(model))
    _known[version] = known
    return known


def _meta_passes(known: _Known, meta: Any) -> bool:
    if known.meta:
        last = known.meta[0]
        if meta is _ABSENT or last is _ABSENT:
            if meta is last:
                return True
        elif same_json(meta, last):
            return True
    probe: dict[str, Any] = {"name": ""}
    if meta is not _ABSENT:
        probe["_meta"] = meta
    try:
        known.model.__pydantic_validator__.validate_python(probe, by_name=False)
    except ValidationError:
        return False
    known.meta = (copy_json(meta),)
    return True


def _envelope_passes(known: _Known, envelope: Envelope, meta: dict[str, Any]) -> bool | None:
    """Whether `meta`, read into `envelope`, passes the wire type; None: only the wire type knows."""
    rules = known.meta_rules
    if rules is None:
        return None
    if not rules.unsure.isdisjoint(meta):
        return None
    if type(meta.get(_TOKEN_KEY, "")) not in _TOKEN_TYPES:  # a string is one
        return None
    if known.envelope is envelope:
        return True
    probe = {"name": "", "_meta": {key: meta[key] for key in ENVELOPE_KEYS if key in meta}}
    try:
        known.model.__pydantic_validator__.validate_python(probe, by_name=False)
    except ValidationError:
        return False
    known.envelope = envelope
    return True


def tool_call_params_pass(version: str, params: Mapping[str, Any], envelope: Envelope | None = None) -> bool:
    """True when `params` are plain and pass `tools/call`'s wire type at `version`; False: ask
    the wire type (they may pass or not).

    `envelope` is what `read_envelope` read from these params' `_meta`, when it did: the
    envelope values' verdict is then the one of the last `_meta` read into that envelope.
    """
    if type(params) is not dict:
        return False
    fields = cast("dict[str, Any]", params)
    if not fields.keys() <= _KEYS or type(fields.get("name")) is not str:
        return False
    arguments: Any = fields.get("arguments")
    if arguments is not None:
        if type(arguments) is not dict:
            return False
        for key in cast("dict[Any, Any]", arguments):
            if type(key) is not str:
                return False
    known = _known_for(version)
    if known is None:
        return False
    meta: Any = fields.get("_meta", _ABSENT)
    if envelope is not None and type(meta) is dict:
        passes = _envelope_passes(known, envelope, cast("dict[str, Any]", meta))
        if passes is not None:
            return passes
    return _meta_passes(known, meta)
