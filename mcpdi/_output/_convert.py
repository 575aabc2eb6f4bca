"""A tool's return value as a `CallToolResult`: content blocks, `outputSchema`, `structuredContent`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Union, cast, get_args, get_origin

import pydantic_core
from mcp_types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
)
from pydantic import BaseModel, PydanticUserError, TypeAdapter

from mcpdi._annotations import is_union, strip_annotated
from mcpdi._buildable import StrictSchema, builds_later
from mcpdi._deferred import Deferred
from mcpdi._output._media import Audio, Image
from mcpdi._output._model import choose_output_model
from mcpdi.engine import InvalidSignature

__all__ = (
    "Output",
    "later_output",
    "plan_output",
    "plan_output_at_once",
    "plan_output_later",
    "returns_input_required",
    "to_content",
)

logger = logging.getLogger("mcpdi")

_CONTENT = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_RENDERED = (*_CONTENT, Image, Audio)  # what `to_content` turns into blocks rather than JSON text
_SCALARS = (str, int, bool)
# JSON Schema types of the plain returns whose `outputSchema` is written without pydantic.
_WRITTEN: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True, slots=True)
class Output:
    """How a tool's results are turned into a `CallToolResult`, decided at registration."""

    schema: dict[str, Any] | None  # the published outputSchema; None: unstructured
    adapter: Deferred[TypeAdapter[Any]] | None  # built on the first result that needs it
    wrap: bool  # structured as {"result": value}
    scalar: type | None = None  # the wrapped type when it is plain str, int or bool

    def to_result(self, value: Any) -> CallToolResult:
        if isinstance(value, CallToolResult):
            return value
        content = to_content(value)
        if self.adapter is None:
            return CallToolResult(content=content)
        if type(value) is self.scalar:
            # What validating and dumping {"result": value} would give, without doing it.
            return CallToolResult(content=content, structured_content={"result": value})
        payload = {"result": value} if self.wrap else value
        adapter = self.adapter.get()
        # The tool hands back Python names; the wire and the outputSchema use the aliases.
        validated = adapter.validate_python(payload, by_alias=True, by_name=True)
        if isinstance(validated, BaseModel):
            structured = validated.model_dump(mode="json", by_alias=True)
        else:
            structured = adapter.dump_python(validated, mode="json", by_alias=True)
        return CallToolResult(content=content, structured_content=structured)

    def to_wire(self, value: Any) -> dict[str, Any] | CallToolResult:
        """`to_result(value)` dumped (by alias, JSON mode, without None), written directly for
        a `str` or a plain scalar result, which is one text block (and `{"result": value}`);
        anything else is `to_result(value)` itself, for the caller to dump."""
        kind = type(value)  # pyright: ignore[reportUnknownVariableType]
        if kind is str and (self.adapter is None or self.scalar is str):
            text: str = value
        elif kind is self.scalar:  # int or bool (never None: `type` of a value), as to_content renders it
            text = pydantic_core.to_json(value, fallback=str, indent=2).decode()
        else:
            return self.to_result(value)
        wire: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if self.adapter is not None:
            wire["structuredContent"] = {"result": value}
        wire["isError"] = False
        wire["resultType"] = "complete"
        return wire


UNSTRUCTURED = Output(None, None, wrap=False)
_UNSTRUCTURED: Any = object()  # `_published_annotation`'s answer when there is no schema to publish


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """An `outputSchema` must have an object at its root, not a bare `$ref` (self-referencing models)."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    definition = cast("dict[str, Any]", schema["$defs"][ref.removeprefix("#/$defs/")])
    return {**definition, **{key: value for key, value in schema.items() if key != "$ref"}}


def _is_subclass(annotation: Any, base: type | tuple[type, ...]) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, base)


def returns_input_required(annotation: Any) -> bool:
    """Whether a return annotation names `InputRequiredResult` (alone or as a union arm)."""
    bare = strip_annotated(annotation)
    if is_union(bare):
        return any(_is_subclass(strip_annotated(a), InputRequiredResult) for a in get_args(bare))
    return _is_subclass(bare, InputRequiredResult)


def _returns_content(annotation: Any) -> bool:
    bare = strip_annotated(annotation)
    origin = get_origin(bare)
    if origin is None:
        return _is_subclass(bare, _RENDERED)
    if is_union(bare) or origin in (list, tuple):
        return any(_returns_content(a) for a in get_args(bare))
    return False


def _published_annotation(annotation: Any, structured_output: bool | None) -> Any:
    """The annotation an `outputSchema` would be made of; `_UNSTRUCTURED` when there is none to make."""
    if structured_output is False:
        return _UNSTRUCTURED
    bare: Any = strip_annotated(annotation)
    if is_union(bare):
        arms = tuple(a for a in get_args(bare) if not _is_subclass(strip_annotated(a), InputRequiredResult))
        if not arms:
            return _UNSTRUCTURED
        if len(arms) != len(get_args(bare)):
            annotation = arms[0] if len(arms) == 1 else Union[arms]  # noqa: UP007  # a runtime tuple of arms
            bare = strip_annotated(annotation)
    if _is_subclass(bare, (CallToolResult, InputRequiredResult)):
        return _UNSTRUCTURED
    if structured_output is None and (bare is Any or _returns_content(bare)):
        return _UNSTRUCTURED
    return annotation


def plan_output(
    function_name: str, annotation: Any, *, location: str, structured_output: bool | None = None
) -> Output:
    """Decide structured output from the return annotation (pass `Any` when there is none).

    `structured_output=None` publishes an `outputSchema` whenever the type allows one (and
    falls back to unstructured output, with a log line, when it does not); `True` makes a
    type that cannot be published an `InvalidSignature`; `False` never publishes one.
    """
    published = _published_annotation(annotation, structured_output)
    if published is _UNSTRUCTURED:
        return UNSTRUCTURED
    return _structured_output(function_name, published, location, structured_output)


def plan_output_later(
    function_name: str, annotation: Any, *, location: str, structured_output: bool | None = None
) -> Deferred[Output]:
    """`plan_output`, left for the first list or call when the annotation is known to build.

    A plain `str`, `int`, `float` or `bool` return gets its `outputSchema` written without
    pydantic (on first use) and its model on the first result that needs one; a return of a
    shape `builds_later` knows is planned on first use; anything else is planned now, so its
    mistakes are registration's.
    """
    planned = plan_output_at_once(
        function_name, annotation, location=location, structured_output=structured_output
    )
    if planned is not None:
        return Deferred.ready(planned)
    return Deferred(later_output, function_name, annotation, location, structured_output)


def plan_output_at_once(
    function_name: str, annotation: Any, *, location: str, structured_output: bool | None = None
) -> Output | None:
    """The output `plan_output_later` decides at registration; None: `later_output` builds it on first use."""
    published = _published_annotation(annotation, structured_output)
    if published is _UNSTRUCTURED:
        return UNSTRUCTURED
    if (isinstance(published, type) and published in _WRITTEN) or builds_later(published):
        return None
    return _structured_output(function_name, published, location, structured_output)


def later_output(
    function_name: str, annotation: Any, location: str, structured_output: bool | None
) -> Output:
    """The output `plan_output_at_once` left for first use (it cannot fail: its shape builds)."""
    published = _published_annotation(annotation, structured_output)
    if isinstance(published, type) and published in _WRITTEN:
        return _written_output(function_name, published)
    return _structured_output(function_name, published, location, structured_output)


def _written_output(function_name: str, returns: type) -> Output:
    """The output of a plain scalar return: the schema pydantic writes for `{"result": T}`."""
    schema = {
        "properties": {"result": {"title": "Result", "type": _WRITTEN[returns]}},
        "required": ["result"],
        "title": f"{function_name}Output",
        "type": "object",
    }
    adapter = Deferred(_wrapped_adapter, function_name, returns)
    return Output(schema, adapter, wrap=True, scalar=returns if returns in _SCALARS else None)


def _wrapped_adapter(function_name: str, annotation: Any) -> TypeAdapter[Any]:
    chosen = choose_output_model(function_name, annotation)
    assert chosen is not None
    return TypeAdapter[Any](chosen.model)


def _structured_output(
    function_name: str, annotation: Any, location: str, structured_output: bool | None
) -> Output:
    try:
        chosen = choose_output_model(function_name, annotation)
        if chosen is None:
            reason = "it is a class without annotated fields"
        else:
            adapter = TypeAdapter[Any](chosen.model)
            schema = _inline_root(adapter.json_schema(schema_generator=StrictSchema))
            scalar = strip_annotated(annotation) if chosen.wrap and annotation in _SCALARS else None
            return Output(schema, Deferred.ready(adapter), wrap=chosen.wrap, scalar=scalar)
    except (
        PydanticUserError,
        pydantic_core.SchemaError,
        NameError,
        TypeError,
        ValueError,
        RuntimeError,
    ) as error:
        reason = f"{type(error).__name__}: {error}"
    if structured_output:
        msg = (
            f"The return annotation of {function_name!r} ({location}) cannot be published as an "
            f"outputSchema ({reason}); return a pydantic model, a TypedDict, a dataclass or JSON-able "
            "data, or drop structured_output=True"
        )
        raise InvalidSignature(msg)
    logger.info(
        "%s (%s) returns unstructured content: its return type has no outputSchema (%s)",
        function_name,
        location,
        reason,
    )
    return UNSTRUCTURED


def to_content(value: Any) -> list[ContentBlock]:
    """The unstructured rendering of a result: text as is, blocks as is, anything else as JSON."""
    if value is None:
        return []
    if isinstance(value, _CONTENT):
        return [value]
    if isinstance(value, Image):
        return [value.to_image_content()]
    if isinstance(value, Audio):
        return [value.to_audio_content()]
    if isinstance(value, list | tuple):
        blocks: list[ContentBlock] = []
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            blocks.extend(to_content(item))
        return blocks
    text = value if isinstance(value, str) else pydantic_core.to_json(value, fallback=str, indent=2).decode()
    return [TextContent(type="text", text=text)]
