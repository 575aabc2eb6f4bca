"""The `requestedSchema` of a form elicitation: a flat object of primitive properties."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from mcpdi.lowlevel._wire_eras import handshake_era

__all__ = ("InvalidElicitationSchema", "render_elicitation_schema")


@cache
def _primitive() -> TypeAdapter[Any]:
    """The handshake era's form field definition, which a handshake server loads anyway.

    The 2026-07-28 era's module would cost a start more, and both eras define the same form
    fields (a test holds their schemas equal). Built by the first form checked.
    """
    return TypeAdapter[Any](handshake_era().PrimitiveSchemaDefinition)


class InvalidElicitationSchema(TypeError):
    """A model cannot be asked in a form: one of its fields is not a primitive property."""


class _FlatOptionalSchema(GenerateJsonSchema):
    """Writes `T | None` as `T` and drops `None` defaults: optional means "not required" here."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        rendered = super().default_schema(schema)
        if rendered.get("default", ...) is None:
            del rendered["default"]
        return rendered


@cache
def render_elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model as a form schema; raises `InvalidElicitationSchema` naming the first bad field."""
    schema = model.model_json_schema(schema_generator=_FlatOptionalSchema)
    for field, prop in schema.get("properties", {}).items():
        try:
            _primitive().validate_python(prop)
        except ValidationError:
            msg = (
                f"{model.__qualname__}.{field} cannot be asked in a form: it renders as {prop!r}; "
                "a form field must be a string, number, integer, boolean or enum "
                "(use one of those, or ask for it in a separate question)"
            )
            raise InvalidElicitationSchema(msg) from None
    return schema
