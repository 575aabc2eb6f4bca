"""A function's call arguments as a pydantic model and `inputSchema`, with the `Header` marker."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import json
import math
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, WithJsonSchema, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import DEFAULT_REF_TEMPLATE, GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import core_schema

from mcpdi._buildable import builds_later, json_plain
from mcpdi._deferred import UNBUILT, built_once
from mcpdi.engine import Argument, InvalidSignature
from mcpdi.engine._records import built_fast

__all__ = (
    "ArgumentsModel",
    "ArgumentsPlan",
    "Header",
    "annotation_extras",
    "build_arguments_model",
    "dump_arguments",
    "header_marking",
    "plan_arguments",
    "pre_parse_json",
    "read_plain_arguments",
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

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        """Pydantic's schema; for an all-scalar model, the same schema written without building the model."""
        written = _SCALAR_SCHEMAS.get(cls)
        defaults = (by_alias, ref_template, schema_generator, mode, union_format)
        if written is not None and defaults == (
            None,
            DEFAULT_REF_TEMPLATE,
            GenerateJsonSchema,
            "validation",
            "any_of",
        ):
            return copy.deepcopy(written)
        return super().model_json_schema(
            by_alias, ref_template, schema_generator, mode, union_format=union_format
        )


class _DeferredArgumentsModel(ArgumentsModel):
    """An all-scalar argument model: pydantic builds its validator on first use, not at registration."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)


# JSON Schema of the scalar annotations, as pydantic writes them.
_SCALAR_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
# The schemas of the all-scalar models, written at registration (the models build lazily).
_SCALAR_SCHEMAS: weakref.WeakKeyDictionary[type[ArgumentsModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def _scalar_property(argument: Argument) -> dict[str, Any] | None:
    """The schema (`title`, `type`, `default`) of a plain `str`/`int`/`float`/`bool` argument, else None.

    Only annotations that cannot fail to build and whose schema is fixed qualify: the bare
    type, no `Annotated` extras, a required argument or a default of exactly that type.
    """
    annotation: Any = argument.annotation
    if annotation not in _SCALAR_TYPES or callable(getattr(BaseModel, argument.name, None)):
        return None
    title = argument.name.title().replace("_", " ").strip()
    schema: dict[str, Any] = {"title": title, "type": _SCALAR_TYPES[annotation]}
    if argument.required:
        return schema
    default: Any = argument.default
    if type(default) is not annotation or (isinstance(default, float) and not math.isfinite(default)):
        return None
    return {"default": default, **schema}


def _scalar_schema(model_name: str, arguments: tuple[Argument, ...]) -> dict[str, Any] | None:
    """The `inputSchema` pydantic would write when every argument is a plain scalar, else None."""
    properties: dict[str, Any] = {}
    for argument in arguments:
        written = _scalar_property(argument)
        if written is None:
            return None
        properties[argument.name] = written
    schema: dict[str, Any] = {"properties": properties}
    required = [argument.name for argument in arguments if argument.required]
    if required:
        schema["required"] = required
    return {**schema, "title": model_name, "type": "object"}


@built_fast
@dataclass(frozen=True, slots=True)
class ArgumentsPlan:
    """A function's argument model and `inputSchema`, each built on first use where that is safe.

    The plan keeps what builds them and, once built, the model and the schema themselves: one
    object per registered entry, where a deferred value per part would keep three more.
    """

    model_name: str
    arguments: tuple[Argument, ...]
    owner: str  # the tool, prompt or resource, for errors
    location: str
    deferred: bool  # True: nothing in the annotations can be refused later, nor mark a header
    # When every argument is a plain scalar (`_scalar_property`): (name, type, required, default)
    # each, for `read_plain_arguments`; None otherwise.
    plain: tuple[tuple[str, type, bool, Any], ...] | None = None
    _model: Any = dataclasses.field(default=UNBUILT, init=False, repr=False, compare=False)
    _schema: Any = dataclasses.field(default=UNBUILT, init=False, repr=False, compare=False)

    @property
    def model_built(self) -> bool:
        return self._model is not UNBUILT

    @property
    def schema_built(self) -> bool:
        return self._schema is not UNBUILT

    def model(self) -> type[ArgumentsModel]:
        """The argument model, built now if it was left for first use."""
        model = self._model
        return model if model is not UNBUILT else built_once(self, "_model", self._build_model)

    def schema(self) -> dict[str, Any]:
        """The `inputSchema`: written directly for plain scalars, else the model's."""
        schema = self._schema
        return schema if schema is not UNBUILT else built_once(self, "_schema", self._build_schema)

    def _build_model(self) -> type[ArgumentsModel]:
        return build_arguments_model(
            self.model_name, self.arguments, owner=self.owner, location=self.location
        )

    def _build_schema(self) -> dict[str, Any]:
        written = _scalar_schema(self.model_name, self.arguments)
        return written if written is not None else self.model().model_json_schema()


_ABSENT: Any = object()


def _plain_arguments(arguments: tuple[Argument, ...]) -> tuple[tuple[str, type, bool, Any], ...] | None:
    if any(_scalar_property(argument) is None for argument in arguments):
        return None
    # A required argument's default is None rather than `Parameter.empty` (a class): a tuple of
    # atoms only is one the garbage collector stops visiting.
    return tuple((a.name, a.annotation, a.required, None if a.required else a.default) for a in arguments)


def read_plain_arguments(
    plain: tuple[tuple[str, type, bool, Any], ...], raw: Mapping[str, Any]
) -> dict[str, Any] | None:
    """`dump_arguments` of the all-scalar model validating `raw`, when every argument is exactly of
    its type or absent with a default (what the model passes as it is; other keys it ignores).

    None: anything else (a missing required argument, a `"5"` or `5` for a float, a `True`
    for an int, JSON in a string), for the model to convert or refuse.
    """
    arguments: dict[str, Any] = {}
    for name, kind, required, default in plain:
        value = raw.get(name, _ABSENT)
        if type(value) is kind:
            arguments[name] = value
        elif value is _ABSENT and not required:
            arguments[name] = default
        else:
            return None
    return arguments


def _check_names(arguments: tuple[Argument, ...], *, owner: str, location: str) -> None:
    for argument in arguments:
        if argument.name.startswith("_"):
            msg = (
                f"Parameter {argument.name!r} of {owner!r} ({location}) starts with '_', "
                "which a JSON argument name cannot map to; rename it"
            )
            raise InvalidSignature(msg, parameter=argument.name)


def _builds_later(argument: Argument) -> bool:
    """Whether the argument's field cannot fail to build or render (and carries no header marking)."""
    annotation: Any = argument.annotation
    if annotation is not inspect.Parameter.empty and not builds_later(annotation):
        return False
    return argument.required or json_plain(argument.default)


def plan_arguments(
    model_name: str, arguments: tuple[Argument, ...], *, owner: str, location: str
) -> ArgumentsPlan:
    """`build_arguments_model` and its `inputSchema`, left for first use when nothing is at stake.

    When every annotation is of a shape `builds_later` knows (and every default is plain
    JSON), the model is created on the first call and the schema on the first list (written
    directly for plain scalars, as `ArgumentsModel.model_json_schema` does); otherwise both
    are built now, so a mistake in them is still registration's `InvalidSignature`.
    """
    _check_names(arguments, owner=owner, location=location)
    if all(_builds_later(argument) for argument in arguments):
        plain = _plain_arguments(arguments)
        return ArgumentsPlan(model_name, arguments, owner, location, deferred=True, plain=plain)
    planned = ArgumentsPlan(model_name, arguments, owner, location, deferred=False)
    planned.model()  # now: a mistake in the annotations is registration's `InvalidSignature`
    planned.schema()
    return planned


def build_arguments_model(
    model_name: str, arguments: tuple[Argument, ...], *, owner: str, location: str
) -> type[ArgumentsModel]:
    """A model whose schema is the `inputSchema` (title `<model_name>`, SDK-compatible).

    When every argument is a plain `str`/`int`/`float`/`bool`, pydantic's build of the model
    (its validator and serializer) waits for the first validation and `model_json_schema()`
    returns the same schema written directly: such a model cannot fail to build, so nothing
    a registration would refuse is deferred.
    """
    _check_names(arguments, owner=owner, location=location)
    fields: dict[str, Any] = {}
    for argument in arguments:
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
    scalar = _scalar_schema(model_name, arguments)
    if scalar is None:
        return create_model(model_name, __base__=ArgumentsModel, **fields)
    model = create_model(model_name, __base__=_DeferredArgumentsModel, **fields)
    _SCALAR_SCHEMAS[model] = scalar
    return model


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
