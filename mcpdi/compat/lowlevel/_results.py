"""What 1.x made of a `call_tool` or `read_resource` handler's return value, and its schema checks."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, cast

import mcp_types as types
from pydantic import AnyUrl, ValidationError

__all__ = (
    "ReadResourceContents",
    "error_result",
    "jsonschema_module",
    "resource_contents",
    "resource_uri",
    "schema_problem",
    "tool_result",
)

NEEDS_JSONSCHEMA: Final = (
    "checking a tool's inputSchema or outputSchema needs the jsonschema package, as in 1.x: "
    "pip install jsonschema"
)


@dataclass(frozen=True)
class ReadResourceContents:
    """One part of what a 1.x `read_resource` handler returns: text or bytes, its MIME type, `_meta`."""

    content: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def jsonschema_module() -> Any:
    """The `jsonschema` module; a clear ImportError when it is not installed."""
    try:
        import jsonschema
    except ModuleNotFoundError:
        raise ImportError(NEEDS_JSONSCHEMA) from None
    return jsonschema


def schema_problem(instance: Any, schema: dict[str, Any]) -> str | None:
    """The first way `instance` breaks `schema`, as jsonschema words it; None when it fits."""
    jsonschema = jsonschema_module()
    try:
        jsonschema.validate(instance=instance, schema=schema)
    except jsonschema.ValidationError as error:
        return str(error.message)
    return None


def tool_result(results: Any, tool: types.Tool | None) -> types.CallToolResult:
    """1.x's normalisation: a result as is; `(content, structured)`; a dict (structured, and its
    JSON as text); any other iterable (content blocks); else an error result. The structured
    part is then checked against the listed tool's `outputSchema`."""
    if isinstance(results, types.CallToolResult):
        return results
    content: Iterable[Any]
    structured: dict[str, Any] | None
    if isinstance(results, tuple) and len(cast("tuple[Any, ...]", results)) == 2:
        content, structured = cast("tuple[Iterable[Any], dict[str, Any]]", results)
    elif isinstance(results, dict):
        structured = cast("dict[str, Any]", results)
        content = [types.TextContent(text=json.dumps(structured, indent=2))]
    elif isinstance(results, Iterable) and not isinstance(results, str | bytes):
        content, structured = cast("Iterable[Any]", results), None
    else:
        return error_result(f"Unexpected return type from tool: {type(results).__name__}")
    schema = tool.output_schema if tool is not None else None
    if schema is not None:
        if structured is None:
            return error_result(
                "Output validation error: outputSchema defined but no structured output returned"
            )
        try:
            problem = schema_problem(structured, schema)
        except ImportError as error:
            return error_result(f"Output validation error: {error}")
        if problem is not None:
            return error_result(f"Output validation error: {problem}")
    # validated, as 1.x built the model: content blocks given as dicts are read as blocks
    return types.CallToolResult.model_validate(
        {"content": list(content), "structuredContent": structured, "isError": False}
    )


def resource_uri(uri: str) -> AnyUrl | str:
    """The URI as 1.x handed it to handlers, a pydantic `AnyUrl`; as is when it is not a URL."""
    try:
        return AnyUrl(uri)
    except ValidationError:
        return uri


def resource_contents(uri: AnyUrl | str, result: Any) -> types.ReadResourceResult:
    """1.x's `read_resource` conversion: str or bytes (one part), or an iterable of
    `ReadResourceContents`; anything else is the handler's error."""
    if isinstance(result, str | bytes):
        parts: list[Any] = [ReadResourceContents(result)]
    elif isinstance(result, Iterable):
        parts = list(cast("Iterable[Any]", result))
    else:
        # 1.x's text, naming the type as `type(result)` prints
        msg = f"Unexpected return type from read_resource: {type(result)}"
        raise ValueError(msg)
    return types.ReadResourceResult(contents=[_part(str(uri), part) for part in parts])


def _part(uri: str, part: Any) -> types.TextResourceContents | types.BlobResourceContents:
    data, mime_type, meta = part.content, part.mime_type, getattr(part, "meta", None)
    given: dict[str, Any] = {"uri": uri, "_meta": meta}
    if isinstance(data, str):
        return types.TextResourceContents.model_validate(
            {**given, "text": data, "mimeType": mime_type or "text/plain"}
        )
    blob = base64.b64encode(data).decode()
    return types.BlobResourceContents.model_validate(
        {**given, "blob": blob, "mimeType": mime_type or "application/octet-stream"}
    )
