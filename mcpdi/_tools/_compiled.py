"""Tools of an `MCPServer`: compiled at registration, called per `tools/call` in either era."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
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
from pydantic import ValidationError

from mcpdi._arguments import (
    ArgumentsModel,
    ArgumentsPlan,
    dump_arguments,
    plan_arguments,
    pre_parse_json,
    read_plain_arguments,
)
from mcpdi._asking import AnswerRejected
from mcpdi._checks import check_hidden_headers
from mcpdi._context import Context
from mcpdi._deferred import UNBUILT, built_once
from mcpdi._errors import ElicitationRefused, ResourceError, ToolError
from mcpdi._options import ToolOptions
from mcpdi._output._convert import Output, later_output, plan_output_at_once, returns_input_required
from mcpdi._registration import (
    compile_mcp_plan,
    fields_as_typed,
    function_name,
    published_description,
    published_name,
    with_same_checks,
)
from mcpdi._rounds import CallTarget, Pending, run_request
from mcpdi._state._security import RequestStateSecurity
from mcpdi._telemetry import record_on_current_span, trace_resolver, tracing
from mcpdi.engine import InvalidSignature, Plan, ResolverError
from mcpdi.engine._compile import instrument_plan
from mcpdi.engine._records import built_fast
from mcpdi.lowlevel._errors import MCPError
from mcpdi.lowlevel._param_headers import HeaderParam, find_invalid_x_mcp_header, x_mcp_header_params

__all__ = ("RegisteredTool", "call_tool", "compile_tool", "failure_text")

logger = logging.getLogger("mcpdi")


@built_fast
@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """A tool as registration decided it: its plan, argument model, published schema and output.

    The models, schemas and the `Tool` object may be left for the first list or call (see
    `plan_arguments`, `plan_output_at_once`); each is built once, on first use. The output, the
    `Tool` and the traced plan are kept here once built, next to what builds them: no deferred
    object of their own per registered tool.
    """

    name: str
    plan: Plan
    arguments: ArgumentsPlan
    header_params: tuple[HeaderParam, ...]  # the arguments mirrored as Mcp-Param-* headers
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)  # for overrides
    # What the published `Tool` says besides the name and the schemas.
    title: str | None = field(default=None, repr=False, compare=False)
    description: str = field(default="", repr=False, compare=False)
    annotations: ToolAnnotations | None = field(default=None, repr=False, compare=False)
    icons: list[Icon] | None = field(default=None, repr=False, compare=False)
    meta: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    structured_output: bool | None = field(default=None, repr=False, compare=False)
    # Built on first use (or at registration when that is where a mistake in them belongs), and
    # copied along with the tool when an override recompiles its plan.
    _output: Any = field(default=UNBUILT, repr=False, compare=False)
    _wire: Any = field(default=UNBUILT, repr=False, compare=False)
    # `plan` with a span around each resolver, built when a call first runs while tracing is on
    _traced: Any = field(default=UNBUILT, init=False, repr=False, compare=False)

    @property
    def traced_plan(self) -> Plan:
        traced_plan = self._traced
        if traced_plan is UNBUILT:
            traced_plan = built_once(self, "_traced", self._build_traced)
        return traced_plan

    @property
    def arguments_model(self) -> type[ArgumentsModel]:
        return self.arguments.model()

    @property
    def output(self) -> Output:
        output = self._output
        return output if output is not UNBUILT else built_once(self, "_output", self._build_output)

    @property
    def wire_built(self) -> bool:
        return self._wire is not UNBUILT

    @property
    def wire(self) -> Tool:
        """What tools/list publishes."""
        wire = self._wire
        return wire if wire is not UNBUILT else built_once(self, "_wire", self._build_wire)

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.wire.input_schema

    def _build_traced(self) -> Plan:
        return traced(self.plan)

    def _build_output(self) -> Output:
        plan = self.plan
        returns = plan.hints.get("return", Any)
        return later_output(function_name(plan.fn), returns, plan.location, self.structured_output)

    def _build_wire(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.arguments.schema(),
            output_schema=self.output.schema,
            annotations=self.annotations,
            icons=self.icons,
            _meta=self.meta,  # pyright: ignore[reportCallIssue]
        )


def compile_tool(
    fn: Callable[..., Any],
    options: ToolOptions,
    localns: Mapping[str, Any] | None,
    *,
    validate_resolvers: bool = False,
) -> RegisteredTool:
    """Compile `fn` into a tool; every mistake raises `InvalidSignature` here, not at call time."""
    title, annotations, icons, meta = options.title, options.annotations, options.icons, options.meta
    structured_output = options.structured_output
    fn_name = function_name(fn)
    tool_name = published_name(fn, options.name, "tool")
    plan = compile_mcp_plan(fn, tool_name, localns, validate_resolvers=validate_resolvers)
    check_hidden_headers(plan, "Tool", tool_name)
    arguments = plan_arguments(f"{fn_name}Arguments", plan.arguments, owner=tool_name, location=plan.location)
    header_params: tuple[HeaderParam, ...] = ()
    if not arguments.deferred:  # a deferred model has no header marking to check
        input_schema = arguments.schema()
        reason = find_invalid_x_mcp_header(input_schema)
        if reason is not None:
            msg = f"Tool {tool_name!r} has an invalid x-mcp-header annotation: {reason}"
            raise InvalidSignature(msg, function=fn)
        header_params = x_mcp_header_params(input_schema)
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
    output = plan_output_at_once(
        fn_name, returns, location=plan.location, structured_output=structured_output
    )
    doc = published_description(fn, options.description)
    tool = RegisteredTool(
        tool_name,
        plan,
        arguments,
        header_params,
        localns,
        title,
        doc,
        annotations,
        icons,
        meta,
        structured_output,
        UNBUILT if output is None else output,
    )
    # Fields a user could get wrong are validated now: such a `Tool` is built at registration.
    if not fields_as_typed(
        icons, (tool_name, str), (title, str), (doc, str), (annotations, ToolAnnotations), (meta, dict)
    ):
        _ = tool.wire
    return tool


def traced(plan: Plan) -> Plan:
    """The same plan with a span around each resolver, run when tracing is on."""
    return with_same_checks(plan, instrument_plan(plan, trace_resolver)) if plan.steps else plan


def _error_result(text: str, error: Exception, ctx: Context[Any]) -> CallToolResult:
    record_on_current_span(error)
    on_failure = ctx.request_context.on_failure
    if on_failure is not None:
        on_failure(error)
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
    wire: bool = False,
) -> CallToolResult | InputRequiredResult | dict[str, Any]:
    """Validate the arguments, run the resolvers and the body, and shape the result.

    With `wire`, a plain result comes as its wire form (`Output.to_wire`), for the runner.
    """
    raw = params.arguments
    plain = tool.arguments.plain
    arguments = None if plain is None else read_plain_arguments(plain, raw or {})
    if arguments is None:
        model = tool.arguments_model
        try:
            # The model's validator itself: `model_validate` only forwards to it, at a cost per call.
            validated = model.__pydantic_validator__.validate_python(pre_parse_json(model, raw or {}))
        except ValidationError as error:
            return _error_result(f"{_error_prefix(tool)}: {error}", error, ctx)
        arguments = dump_arguments(validated)
    target = CallTarget("tools/call", tool.name, raw, audience)
    try:
        plan = tool.traced_plan if tracing() else tool.plan
        value = await run_request(plan, arguments, ctx, target=target, security=security, params=params)
        if isinstance(value, Pending):
            return value.result
        return tool.output.to_wire(value) if wire else tool.output.to_result(value)
    except MCPError:
        raise
    except Exception as error:
        return _error_result(failure_text(error, _error_prefix(tool)), error, ctx)


def _error_prefix(tool: RegisteredTool) -> str:
    """How a failed call's error text begins (built only when a call fails)."""
    return f"Error executing tool {tool.name}"
