"""OpenTelemetry spans for the requests an `MCPServer` answers; nothing at all without an SDK.

A span per `tools/call`, `prompts/get` and `resources/read`, named `<method> <target>`,
continuing the client's trace when its `_meta` carries `traceparent` (W3C trace context),
with the outcome recorded: a tool error or a protocol error marks the span as failed.
Only `opentelemetry-api` is needed; spans are recorded once an SDK's tracer provider is set.
Its trace API is imported with the first span: until something imports it, no provider can
have been set, so a process without telemetry never loads it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_types import CallToolResult, InputRequiredResult
from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER

from mcpdi.engine import Question, Step
from mcpdi.lowlevel._errors import MCPError

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("current_round", "record_on_current_span", "trace_resolver", "traced", "tracing")

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")

_TRACER_NAME = "mcpdi"
_TRACE_API = "opentelemetry.trace"

current_round: ContextVar[int] = ContextVar("mcpdi_round", default=1)
"""The round of the request being answered: 1, then one more per `input_required` retry."""


_PROVIDER_FROM_ENVIRONMENT = OTEL_PYTHON_TRACER_PROVIDER in os.environ


def tracing() -> bool:
    """Whether a tracer provider is installed (spans would be recorded).

    Asked on every request, so it reads the API's global directly: `get_tracer_provider()`
    looks the environment up on each call, which costs more than the rest of this check.
    A provider is set through the trace API, so while nothing has imported it none is.
    """
    trace = sys.modules.get(_TRACE_API)
    if trace is None:
        if not _PROVIDER_FROM_ENVIRONMENT:
            return False
        from opentelemetry import trace
    provider = getattr(trace, "_TRACER_PROVIDER", None)
    if provider is None:
        if not _PROVIDER_FROM_ENVIRONMENT:
            return False
        provider = trace.get_tracer_provider()  # loads and installs the provider the variable names
    # The API's own stand-ins: no SDK installed, so spans are skipped entirely.
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


@contextmanager
def _resolver_span(step: Step) -> Generator[Span]:
    attributes = {
        "mcpdi.resolver": step.qualname,
        "mcpdi.resolver.key": step.key,
        "mcpdi.round": current_round.get(),
    }
    from opentelemetry import trace

    with trace.get_tracer(_TRACER_NAME).start_as_current_span(
        f"resolve {step.name}", attributes=attributes
    ) as span:
        yield span


def _note_question(span: Span, value: Any) -> None:
    if isinstance(value, Question):
        span.set_attribute("mcpdi.asks", type(value).__name__)


def trace_resolver(step: Step) -> Callable[..., Any]:
    """`step.fn` inside a child span `resolve <name>` carrying the round number (for `instrument_plan`).

    Cleanup resolvers (generators, context managers) and call- or app-scoped ones keep their
    own function: the engine drives and caches them by what they are.
    """
    fn = step.fn
    if step.cleanup is not None or step.scope != "round":
        return fn
    if step.is_async:

        @functools.wraps(fn)
        async def traced_async(*args: Any, **kwargs: Any) -> Any:
            with _resolver_span(step) as span:
                value = await fn(*args, **kwargs)
                _note_question(span, value)
                return value

        return traced_async

    @functools.wraps(fn)
    def traced_sync(*args: Any, **kwargs: Any) -> Any:
        with _resolver_span(step) as span:
            value = fn(*args, **kwargs)
            _note_question(span, value)
            return value

    return traced_sync


def record_on_current_span(error: Exception) -> None:
    """Record `error` on the span being recorded, if any (none can be before the trace API loads)."""
    trace = sys.modules.get(_TRACE_API)
    if trace is None:
        return
    span = trace.get_current_span()
    if span.is_recording():
        span.record_exception(error)


def _target(method: str, params: Any) -> str:
    if method == "resources/read":
        return str(params.uri)
    return str(params.name)


def _carrier(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The trace context fields of `_meta` (`traceparent`, `tracestate`, `baggage`), as strings."""
    if not meta:
        return {}
    return {key: value for key, value in meta.items() if isinstance(value, str)}


def traced(
    method: str, handler: Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]]
) -> Callable[[ServerRequestContext[Any], ParamsT], Awaitable[ResultT]]:
    """`handler` inside a server span; the caller checks `tracing()` first."""

    async def handle(request: ServerRequestContext[Any], params: ParamsT) -> ResultT:
        target = _target(method, params)
        from opentelemetry import propagate, trace  # loaded when the first span is recorded
        from opentelemetry.trace import SpanKind, Status, StatusCode

        parent = propagate.extract(_carrier(getattr(params, "meta", None)))
        tracer = trace.get_tracer(_TRACER_NAME)
        attributes: dict[str, Any] = {"mcp.method.name": method, "mcpdi.era": request.era}
        if request.protocol_version:
            attributes["mcp.protocol.version"] = request.protocol_version
        if request.request_id is not None:
            attributes["jsonrpc.request.id"] = str(request.request_id)
        if method == "tools/call":
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get":
            attributes["gen_ai.prompt.name"] = target
        else:
            attributes["mcp.resource.uri"] = target
        answers = getattr(params, "input_responses", None)
        attributes["mcpdi.answers"] = len(answers) if answers else 0
        with tracer.start_as_current_span(
            f"{method} {target}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await handler(request, params)
            except MCPError as error:
                span.record_exception(error)
                span.set_attribute("error.type", str(error.code))
                span.set_attribute("rpc.jsonrpc.error_code", error.code)
                span.set_status(Status(StatusCode.ERROR, error.message))
                raise
            except Exception as error:
                span.record_exception(error)
                span.set_attribute("error.type", type(error).__qualname__)
                span.set_status(Status(StatusCode.ERROR, "internal error"))
                raise
            if isinstance(result, InputRequiredResult):
                span.set_attribute("mcpdi.outcome", "input_required")
                span.set_attribute("mcpdi.questions", len(result.input_requests or {}))
            else:
                span.set_attribute("mcpdi.outcome", "complete")
            if isinstance(result, CallToolResult) and result.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))
            return result

    return handle
