"""Tools of an `MCPServer`: compiled at registration, called per `tools/call` in either era."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    Icon,
    InputRequiredResult,
    TextContent,
    Tool,
    ToolAnnotations,
)
from opentelemetry import trace
from pydantic import ValidationError

from mcpdi._arguments import ArgumentsModel, build_arguments_model, dump_arguments, pre_parse_json
from mcpdi._asking import AnswerRejected
from mcpdi._checks import check_hidden_headers
from mcpdi._context import Context
from mcpdi._errors import ElicitationRefused, ResourceError, ToolError
from mcpdi._output import Output, plan_output, returns_input_required
from mcpdi._registration import (
    compile_mcp_plan,
    function_name,
    published_description,
    published_name,
    with_same_checks,
)
from mcpdi._rounds import CallTarget, Pending, run_request
from mcpdi._state import RequestStateSecurity
from mcpdi._telemetry import trace_resolver, tracing
from mcpdi.engine import InvalidSignature, Plan, ResolverError
from mcpdi.engine._compile import instrument_plan
from mcpdi.lowlevel._errors import MCPError
from mcpdi.lowlevel._param_headers import HeaderParam, find_invalid_x_mcp_header, x_mcp_header_params

__all__ = ("RegisteredTool", "call_tool", "compile_tool", "failure_text", "failures")

logger = logging.getLogger("mcpdi")

failures: ContextVar[list[Exception] | None] = ContextVar("mcpdi_tool_failures", default=None)
"""Set by `MCPServer.call_tool`: the exceptions behind the error results of its call, to re-raise."""


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A tool as registration decided it: its plan, argument model, published schema and output."""

    name: str
    plan: Plan
    traced_plan: Plan  # the same plan with a span around each resolver, run when tracing is on
    arguments_model: type[ArgumentsModel]
    output: Output
    wire: Tool  # what tools/list publishes
    header_params: tuple[HeaderParam, ...]  # the arguments mirrored as Mcp-Param-* headers
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)  # for overrides

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.wire.input_schema


def compile_tool(
    fn: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    annotations: ToolAnnotations | None,
    icons: list[Icon] | None,
    meta: dict[str, Any] | None,
    structured_output: bool | None,
    localns: Mapping[str, Any] | None,
    validate_resolvers: bool = False,
) -> RegisteredTool:
    """Compile `fn` into a tool; every mistake raises `InvalidSignature` here, not at call time."""
    fn_name = function_name(fn)
    tool_name = published_name(fn, name, "tool")
    plan = compile_mcp_plan(fn, tool_name, localns, validate_resolvers=validate_resolvers)
    check_hidden_headers(plan, "Tool", tool_name)
    arguments_model = build_arguments_model(
        f"{fn_name}Arguments", plan.arguments, owner=tool_name, location=plan.location
    )
    input_schema = arguments_model.model_json_schema()
    reason = find_invalid_x_mcp_header(input_schema)
    if reason is not None:
        msg = f"Tool {tool_name!r} has an invalid x-mcp-header annotation: {reason}"
        raise InvalidSignature(msg, function=fn)
    returns = plan.hints.get("return", Any)
    if plan.steps and returns_input_required(returns):
        msg = (
            f"Tool {tool_name!r} combines Resolve(...) parameters with an InputRequiredResult return; "
            "a call has one input_required channel, so the multi-round flow is driven either by "
            "resolvers or by the tool body, not both"
        )
        raise InvalidSignature(msg, function=fn)
    if structured_output and returns is Any:
        msg = f"Tool {tool_name!r} ({plan.location}): structured_output=True needs a JSON-able return type"
        raise InvalidSignature(msg, function=fn)
    output = plan_output(fn_name, returns, location=plan.location, structured_output=structured_output)
    wire = Tool(
        name=tool_name,
        title=title,
        description=published_description(fn, description),
        input_schema=input_schema,
        output_schema=output.schema,
        annotations=annotations,
        icons=icons,
        _meta=meta,  # pyright: ignore[reportCallIssue]
    )
    return RegisteredTool(
        tool_name,
        plan,
        traced(plan),
        arguments_model,
        output,
        wire,
        x_mcp_header_params(input_schema),
        localns,
    )


def traced(plan: Plan) -> Plan:
    """The same plan with a span around each resolver, run when tracing is on."""
    return with_same_checks(plan, instrument_plan(plan, trace_resolver)) if plan.steps else plan


def _error_result(text: str, error: Exception) -> CallToolResult:
    span = trace.get_current_span()
    if span.is_recording():
        span.record_exception(error)
    sink = failures.get()
    if sink is not None:
        sink.append(error)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def failure_text(error: Exception, prefix: str) -> str:
    """What the client is told about a failed call; raises the `MCPError`s that pass through.

    `prefix` is e.g. `Error executing tool order_book`. Texts of `ToolError`, refused
    elicitations and bad answers are shown; anything else is logged and withheld.
    """
    cause: BaseException = error
    if isinstance(error, ResolverError) and error.__cause__ is not None:
        cause = error.__cause__
    if isinstance(cause, MCPError):
        raise cause
    if isinstance(cause, ToolError | ResourceError | ElicitationRefused | AnswerRejected):
        return f"{prefix}: {cause}"
    logger.error("%s", prefix, exc_info=error)
    return prefix


async def call_tool(
    tool: RegisteredTool,
    params: CallToolRequestParams,
    ctx: Context[Any],
    *,
    security: RequestStateSecurity,
    audience: str,
) -> CallToolResult | InputRequiredResult:
    """Validate the arguments, run the resolvers and the body, and shape the result."""
    prefix = f"Error executing tool {tool.name}"
    raw = params.arguments
    model = tool.arguments_model
    try:
        # The model's validator itself: `model_validate` only forwards to it, at a cost per call.
        validated = model.__pydantic_validator__.validate_python(pre_parse_json(model, raw or {}))
    except ValidationError as error:
        return _error_result(f"{prefix}: {error}", error)
    arguments = dump_arguments(validated)
    target = CallTarget("tools/call", tool.name, raw, audience)
    try:
        plan = tool.traced_plan if tracing() else tool.plan
        value = await run_request(plan, arguments, ctx, target=target, security=security, params=params)
        if isinstance(value, Pending):
            return value.result
        return tool.output.to_result(value)
    except MCPError:
        raise
    except Exception as error:
        return _error_result(failure_text(error, prefix), error)
