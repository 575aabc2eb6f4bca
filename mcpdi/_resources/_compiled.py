"""Resources and resource templates of an `MCPServer`; template functions may use resolvers."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pydantic_core
from mcp_types import (
    Annotations,
    BlobResourceContents,
    InputRequiredResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)
from pydantic import ValidationError

from mcpdi._arguments import ArgumentsModel, ArgumentsPlan, dump_arguments, plan_arguments
from mcpdi._context import Context
from mcpdi._deferred import Deferred
from mcpdi._errors import ResourceError, ResourceNotFoundError
from mcpdi._options import ResourceOptions
from mcpdi._registration import compile_mcp_plan, fields_as_typed, function_name, published_description
from mcpdi._resources._security import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from mcpdi._resources._uri_template import UriMatcher, decoded, parse_uri_template
from mcpdi._rounds import CallTarget, Pending, run_request
from mcpdi._state._security import RequestStateSecurity
from mcpdi._tools._compiled import failure_text
from mcpdi.engine import InvalidSignature, Plan, ResolverError
from mcpdi.lowlevel._errors import INTERNAL_ERROR, INVALID_PARAMS, MCPError

__all__ = ("RegisteredResource", "compile_resource", "read_resource")

logger = logging.getLogger("mcpdi")


@dataclass(frozen=True, slots=True)
class RegisteredResource:
    """A resource or template as registration decided it; `match` finds its URI parameters.

    The argument model, a template's `ResourceTemplate` and its regex may be left for first use.
    """

    uri: str  # the URI, or the URI template
    plan: Plan
    arguments: ArgumentsPlan
    # None for a fixed URI; a template's matcher is compiled on the first read (it cannot fail:
    # `parse_uri_template` and the parameter check leave only distinct identifiers in it)
    pattern: Deferred[UriMatcher] | None
    mime_type: str | None
    deferred_wire: Deferred[Resource | ResourceTemplate]
    security: ResourceSecurity = DEFAULT_RESOURCE_SECURITY
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)  # for overrides

    @property
    def arguments_model(self) -> type[ArgumentsModel]:
        return self.arguments.model()

    @property
    def wire(self) -> Resource | ResourceTemplate:
        """What resources/list or resources/templates/list publishes."""
        return self.deferred_wire.get()

    def match(self, uri: str) -> dict[str, str] | None:
        if self.pattern is None:
            return {} if uri == self.uri else None
        return self.pattern.get().match(uri)


def _template_pattern(template: str) -> UriMatcher:
    """The matcher of `books://{title}/stock{?edition}`: each variable's raw value by name."""
    return UriMatcher(parse_uri_template(template, location=""))


def compile_resource(
    fn: Callable[..., Any],
    uri: str,
    options: ResourceOptions,
    localns: Mapping[str, Any] | None,
    *,
    security: ResourceSecurity,
    validate_resolvers: bool = False,
) -> RegisteredResource:
    """Compile `fn` into a resource, or a template when `uri` has `{parameters}`."""
    title, icons, annotations, meta = options.title, options.icons, options.annotations, options.meta
    fn_name = function_name(fn)
    resource_name = options.name or fn_name
    plan = compile_mcp_plan(fn, resource_name, localns, validate_resolvers=validate_resolvers)
    in_uri = list(parse_uri_template(uri, location=plan.location).variable_names)
    taken = [argument.name for argument in plan.arguments]
    if sorted(in_uri) != sorted(taken):
        msg = (
            f"Resource {uri!r} ({plan.location}): the URI's parameters {sorted(in_uri)} must be the "
            f"function's arguments {sorted(taken)}; resolved and Context parameters are not in the URI"
        )
        raise InvalidSignature(msg, function=fn)
    unknown = sorted(security.exempt_params - set(in_uri))
    if unknown:
        msg = (
            f"Resource {uri!r} ({plan.location}): ResourceSecurity(exempt_params=...) names "
            f"{unknown}, which are not variables of the URI {sorted(in_uri)}"
        )
        raise InvalidSignature(msg, function=fn)
    arguments = plan_arguments(
        f"{fn_name}Arguments", plan.arguments, owner=resource_name, location=plan.location
    )
    doc = published_description(fn, options.description)
    mime_type = options.mime_type
    if mime_type is None:
        # What a client may expect before reading: bytes travel as a blob, everything else as text.
        mime_type = "application/octet-stream" if plan.hints.get("return") is bytes else "text/plain"
    published: dict[str, Any] = {
        "name": resource_name,
        "title": title,
        "description": doc,
        "mime_type": mime_type,
        "icons": icons,
        "annotations": annotations,
        "_meta": meta,
    }
    wire: Deferred[Resource | ResourceTemplate]
    if in_uri:
        wire = Deferred(partial(ResourceTemplate, uri_template=uri, **published))
        as_typed = (
            (resource_name, str),
            (title, str),
            (doc, str),
            (mime_type, str),
            (annotations, Annotations),
        )
        if not fields_as_typed(icons, *as_typed, (meta, dict)):
            wire.get()  # what a user could get wrong is refused at registration
        pattern = Deferred.of(_template_pattern, uri)
    else:
        # A fixed URI is checked as a URL by the model: built now, so a bad one fails here.
        wire = Deferred.ready(Resource(uri=uri, **published))
        pattern = None
    return RegisteredResource(uri, plan, arguments, pattern, mime_type, wire, security, localns)


def _contents(
    uri: str, value: Any, mime_type: str | None, meta: dict[str, Any] | None
) -> list[TextResourceContents | BlobResourceContents]:
    """The read's contents; `meta` (the resource's `meta=`) travels with them, as in the SDK."""
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode()
        mime_type = mime_type or "application/octet-stream"
        return [BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type, _meta=meta)]
    text = value if isinstance(value, str) else pydantic_core.to_json(value, fallback=str, indent=2).decode()
    return [TextResourceContents(uri=uri, text=text, mime_type=mime_type or "text/plain", _meta=meta)]


async def read_resource(
    resources: tuple[RegisteredResource, ...],
    params: ReadResourceRequestParams,
    ctx: Context[Any],
    *,
    security: RequestStateSecurity,
    audience: str,
) -> ReadResourceResult | InputRequiredResult:
    """Read the first resource matching the URI (fixed URIs are tried before templates)."""
    uri = str(params.uri)
    for resource in resources:
        raw = resource.match(uri)
        if raw is not None:
            break
    else:
        raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
    refused = resource.security.rejected_parameter(raw)
    if refused is not None:
        # Answered as unknown, and no later template is tried: a looser one must not serve it.
        logger.info("refused %r: variable %r of %r is a path trick", uri, refused, resource.uri)
        raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
    try:
        validated = resource.arguments_model.model_validate(decoded(raw))
    except ValidationError:
        raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri}) from None
    try:
        value = await run_request(
            resource.plan,
            dump_arguments(validated),
            ctx,
            target=CallTarget("resources/read", uri, None, audience),
            security=security,
            params=params,
        )
        if isinstance(value, Pending):
            return value.result
        return ReadResourceResult(contents=_contents(uri, value, resource.mime_type, resource.wire.meta))
    except MCPError:
        raise
    except Exception as error:
        cause = error.__cause__ if isinstance(error, ResolverError) else error
        if isinstance(cause, ResourceNotFoundError):
            raise MCPError(INVALID_PARAMS, str(cause), {"uri": uri}) from None
        if isinstance(cause, ResourceError):
            raise MCPError(INTERNAL_ERROR, str(cause), {"uri": uri}) from None
        # The reference server's wording, which clients may already match on.
        doing = "creating resource from template" if resource.pattern is not None else "reading resource"
        text = failure_text(error, f"Error {doing} {uri}")
        raise MCPError(INTERNAL_ERROR, text, {"uri": uri}) from None
