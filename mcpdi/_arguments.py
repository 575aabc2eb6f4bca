"""A function's call arguments as a pydantic model and `inputSchema`, with the `Header` marker."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, WithJsonSchema, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from mcpdi.engine import Argument, InvalidSignature

__all__ = (
    "ArgumentsModel",
    "Header",
    "annotation_extras",
    "build_arguments_model",
    "dump_arguments",
    "header_marking",
    "pre_parse_json",
)

_HEADER_KEY = "x-mcp-header"


@dataclass(frozen=True, slots=True)
class Header:
    """Mark a tool argument for `Mcp-Param-<name>` mirroring: `Annotated[str, Header("Region")]`.

    Writes `x-mcp-header` into the argument's schema. An optional argument
    (`Annotated[str | None, Header("Region")] = None`) is published with its primitive type,
    since a header carries a value, never a null; an Enum is published inline (`type` + `enum`).
    """

    name: str

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        rendered: dict[str, Any] = dict(handler(schema))
        arms: list[Any] = rendered.get("anyOf") or []
        non_null = [arm for arm in arms if arm != {"type": "null"}]
        if arms and len(non_null) == 1 and isinstance(non_null[0], dict):
            del rendered["anyOf"]
            only = cast("dict[str, Any]", non_null[0])
            rendered = {**only, **rendered}
        if "$ref" in rendered:  # an Enum: inline its definition, a header needs a plain type
            siblings = {key: value for key, value in rendered.items() if key != "$ref"}
            rendered = {**handler.resolve_ref_schema(rendered), **siblings}
        rendered[_HEADER_KEY] = self.name
        return rendered


def header_marking(metadata: Iterable[Any]) -> str | None:
    """How an annotation's extras mark a header (for refusing marks on hidden parameters)."""
    for item in metadata:
        if isinstance(item, Header):
            return f"Header({item.name!r})"
        if isinstance(item, FieldInfo):
            extra = item.json_schema_extra
            if isinstance(extra, Mapping) and _HEADER_KEY in extra:
                return f"Field(json_schema_extra={{{_HEADER_KEY!r}: ...}})"
        schema = item.json_schema if isinstance(item, WithJsonSchema) else None
        if isinstance(schema, Mapping) and _HEADER_KEY in schema:
            return f"WithJsonSchema({{{_HEADER_KEY!r}: ...}})"
    return None


def annotation_extras(annotation: Any) -> tuple[Any, ...]:
    """The `Annotated[...]` extras of an annotation (empty for a plain one)."""
    if get_origin(annotation) is Annotated:
        return tuple(get_args(annotation)[1:])
    return ()


class ArgumentsModel(BaseModel):
    """Base of the generated argument models: one field per call argument."""

    model_config = ConfigDict(arbitrary_types_allowed=True)


def build_arguments_model(
    model_name: str, arguments: tuple[Argument, ...], *, owner: str, location: str
) -> type[ArgumentsModel]:
    """A model whose schema is the `inputSchema` (title `<model_name>`, SDK-compatible)."""
    fields: dict[str, Any] = {}
    for argument in arguments:
        if argument.name.startswith("_"):
            msg = (
                f"Parameter {argument.name!r} of {owner!r} ({location}) starts with '_', "
                "which a JSON argument name cannot map to; rename it"
            )
            raise InvalidSignature(msg, parameter=argument.name)
        annotation: Any = argument.annotation
        extras: list[Any] = []
        if annotation is inspect.Parameter.empty:
            annotation = Any
            extras.append(WithJsonSchema({"title": argument.name, "type": "string"}))
        field_name = argument.name
        if callable(getattr(BaseModel, field_name, None)):
            # `copy`, `json`, ...: pydantic refuses to shadow them, so the field takes an alias.
            extras.append(Field(alias=field_name))
            field_name = f"field_{field_name}"
        typed: Any = Annotated[(annotation, *extras)] if extras else annotation
        fields[field_name] = (typed, ...) if argument.required else (typed, argument.default)
    return create_model(model_name, __base__=ArgumentsModel, **fields)


@functools.lru_cache(maxsize=4096)
def _json_candidates(model: type[ArgumentsModel]) -> tuple[str, ...]:
    """The argument keys whose string values may be JSON: every field not typed `str`."""
    return tuple(
        field.alias or name for name, field in model.model_fields.items() if field.annotation is not str
    )


@functools.lru_cache(maxsize=4096)
def _parameter_names(model: type[ArgumentsModel]) -> tuple[tuple[str, str], ...]:
    """(model attribute, parameter name) per field: a shadowing field's parameter is its alias."""
    names: list[tuple[str, str]] = []
    for name, field in model.model_fields.items():
        shadowing = name.startswith("field_") and field.alias == name.removeprefix("field_")
        names.append((name, field.alias if shadowing and field.alias else name))
    return tuple(names)


def pre_parse_json(model: type[ArgumentsModel], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Decode JSON that some clients send as strings for structured arguments (lists, objects)."""
    parsed = dict(raw)
    for key in _json_candidates(model):
        value = parsed.get(key)
        if not isinstance(value, str):
            continue
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if isinstance(decoded, dict | list):
            parsed[key] = decoded
    return parsed


def dump_arguments(validated: ArgumentsModel) -> dict[str, Any]:
    """The validated values by parameter name, one level deep (models stay models)."""
    return {parameter: getattr(validated, name) for name, parameter in _parameter_names(type(validated))}
