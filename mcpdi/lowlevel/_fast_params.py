"""Whether plain `tools/call` params pass the wire type of their version, known without pydantic.

`Runner` checks every spec request's params against the negotiated version's wire type before
validating them as the handler's params. For the commonest call (a string `name`, an object of
`arguments`, the same `_meta` as the previous call) that check is decided here: the wire
model's fields are validated independently (no validators, extra keys ignored), a `str` passes
a bare `str` field and a dict of string keys passes `dict[str, Any] | None`, and `_meta` is
validated by the wire type once per value. Anything else is left to the wire type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Optional, cast

from pydantic import BaseModel, ValidationError

from mcpdi.lowlevel._json_values import copy_json, same_json
from mcpdi.lowlevel._wire_methods import methods

__all__ = ("tool_call_params_pass",)

_KEYS: Final = frozenset({"name", "arguments", "_meta"})
_ABSENT: Any = object()  # `_meta` not sent
_ARGUMENTS_TYPE: Final[Any] = Optional[dict[str, Any]]  # noqa: UP045  # compared with the field's annotation


@dataclass(slots=True)
class _Known:
    """The wire model of one version, and the last `_meta` it passed (replaced as one value)."""

    model: type[BaseModel]
    meta: tuple[Any, ...] = ()  # () or (a copy of the last `_meta` that passed,)


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


def _known_for(version: str) -> _Known | None:
    if version in _known:
        return _known[version]
    request_type = methods().CLIENT_REQUESTS.get(("tools/call", version))
    field = request_type.model_fields.get("params") if request_type is not None else None
    model = field.annotation if field is not None else None
    known = None
    if isinstance(model, type) and issubclass(model, BaseModel) and _plain_fields(model):
        known = _Known(model)
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


def tool_call_params_pass(version: str, params: Mapping[str, Any]) -> bool:
    """True when `params` are plain and pass `tools/call`'s wire type at `version`; False: ask
    the wire type (they may pass or not)."""
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
    return known is not None and _meta_passes(known, fields.get("_meta", _ABSENT))
