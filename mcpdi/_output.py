"""A tool's return value as a `CallToolResult`: content blocks, `outputSchema`, `structuredContent`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

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
from pydantic import BaseModel, TypeAdapter, create_model
from typing_extensions import is_typeddict

from mcpdi._annotations import is_union, strip_annotated
from mcpdi.engine import InvalidSignature

__all__ = ("Output", "plan_output", "returns_input_required")

_CONTENT = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_SCALARS = (str, int, bool)


@dataclass(frozen=True, slots=True)
class Output:
    """How a tool's results are turned into a `CallToolResult`, decided at registration."""

    schema: dict[str, Any] | None  # the published outputSchema; None: unstructured
    adapter: TypeAdapter[Any] | None
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
        validated = self.adapter.validate_python(payload)
        if isinstance(validated, BaseModel):
            structured = validated.model_dump(mode="json", by_alias=True)
        else:
            structured = self.adapter.dump_python(validated, mode="json", by_alias=True)
        return CallToolResult(content=content, structured_content=structured)


UNSTRUCTURED = Output(None, None, wrap=False)


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
        return _is_subclass(bare, _CONTENT)
    if is_union(bare) or origin in (list, tuple):
        return any(_returns_content(a) for a in get_args(bare))
    return False


def plan_output(function_name: str, annotation: Any, *, location: str) -> Output:
    """Decide structured output from the return annotation (pass `Any` when there is none)."""
    bare: Any = strip_annotated(annotation)
    if is_union(bare):
        arms = tuple(a for a in get_args(bare) if not _is_subclass(strip_annotated(a), InputRequiredResult))
        if not arms:
            return UNSTRUCTURED
        bare = arms[0] if len(arms) == 1 else Union[arms]  # noqa: UP007  # a runtime tuple of arms
        annotation = bare
    if bare is Any or _is_subclass(bare, (CallToolResult, InputRequiredResult)) or _returns_content(bare):
        return UNSTRUCTURED
    try:
        if _is_subclass(bare, BaseModel) or (isinstance(bare, type) and is_typeddict(bare)):
            adapter = TypeAdapter[Any](bare)
            return Output(adapter.json_schema(), adapter, wrap=False)
        if get_origin(bare) is dict and get_args(bare)[:1] == (str,):
            adapter = TypeAdapter[Any](bare)
            return Output({**adapter.json_schema(), "title": f"{function_name}DictOutput"}, adapter, False)
        wrapper = create_model(f"{function_name}Output", result=(annotation, ...))
        adapter = TypeAdapter[Any](wrapper)
        scalar = annotation if annotation in _SCALARS else None
        return Output(adapter.json_schema(), adapter, wrap=True, scalar=scalar)
    except (pydantic_core.SchemaError, TypeError, ValueError, RuntimeError) as error:
        msg = (
            f"The return annotation of {function_name!r} ({location}) cannot be published as an "
            f"outputSchema: {error}; return a pydantic model, a TypedDict or JSON-able data"
        )
        raise InvalidSignature(msg) from error


def to_content(value: Any) -> list[ContentBlock]:
    """The unstructured rendering of a result: text as is, blocks as is, anything else as JSON."""
    if value is None:
        return []
    if isinstance(value, _CONTENT):
        return [value]
    if isinstance(value, list | tuple):
        blocks: list[ContentBlock] = []
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            blocks.extend(to_content(item))
        return blocks
    text = value if isinstance(value, str) else pydantic_core.to_json(value, fallback=str, indent=2).decode()
    return [TextContent(type="text", text=text)]
