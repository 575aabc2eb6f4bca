"""OpenTelemetry: a server span per tool call, prompt and resource read, joined to the client's trace."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve, ToolError

from .conftest import answers, connect

pytestmark = pytest.mark.anyio

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    # The global provider can be set once per process; later tests reuse it.
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def shop() -> MCPServer:
    mcp = MCPServer("Shop")

    @mcp.tool()
    def buy(title: str, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
        return f"bought {title}: {sure.ok}"

    @mcp.tool()
    def refuse() -> str:
        raise ToolError("no stock")

    @mcp.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @mcp.resource("shop://hours")
    def hours() -> str:
        return "9-5"

    return mcp


YES = answers(elicit={"action": "accept", "content": {"ok": True}})


def server_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.kind == SpanKind.SERVER]


def summary(exporter: InMemorySpanExporter) -> list[tuple[str, Any, Any, Any]]:
    return [
        (span.name, span.kind, span.status.status_code, (span.attributes or {}).get("mcpdi.outcome"))
        for span in server_spans(exporter)
    ]


async def test_a_tool_call_is_one_server_span_per_request(
    spans: InMemorySpanExporter, protocol_version: str
) -> None:
    async with connect(shop(), protocol_version, script=YES) as client:
        exchange = await client.call_tool("buy", {"title": "Dune"})
    assert exchange.text == "bought Dune: True"
    finished = server_spans(spans)
    if protocol_version == "2026-07-28":  # two rounds: the question, then the answer
        assert summary(spans) == [
            ("tools/call buy", SpanKind.SERVER, StatusCode.UNSET, "input_required"),
            ("tools/call buy", SpanKind.SERVER, StatusCode.UNSET, "complete"),
        ]
        assert [(s.attributes or {})["mcpdi.answers"] for s in finished] == [0, 1]
    else:
        assert summary(spans) == [("tools/call buy", SpanKind.SERVER, StatusCode.UNSET, "complete")]
    attributes = finished[-1].attributes or {}
    assert attributes["gen_ai.tool.name"] == "buy"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["mcp.protocol.version"] == protocol_version


async def test_errors_are_recorded_on_the_span(spans: InMemorySpanExporter, protocol_version: str) -> None:
    async with connect(shop(), protocol_version) as client:
        await client.call_tool("refuse", {})
        await client.call_tool("nope", {})
    refused, unknown = spans.get_finished_spans()
    assert (refused.status.status_code, (refused.attributes or {})["error.type"]) == (
        StatusCode.ERROR,
        "tool_error",
    )
    assert [event.attributes["exception.message"] for event in refused.events] == ["no stock"]  # type: ignore[index]
    assert unknown.name == "tools/call nope"
    assert (unknown.status.status_code, (unknown.attributes or {})["error.type"]) == (
        StatusCode.ERROR,
        "-32602",
    )


async def test_the_clients_traceparent_makes_the_span_a_child_of_its_trace(
    spans: InMemorySpanExporter, protocol_version: str
) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = "00f067aa0ba902b7"
    meta = {"traceparent": f"00-{trace_id}-{parent}-01"}
    async with connect(shop(), protocol_version) as client:
        await client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta})
        await client.request("resources/read", {"uri": "shop://hours"})
    with_parent, without = spans.get_finished_spans()
    assert with_parent.name == "prompts/get greet"
    assert format(with_parent.context.trace_id, "032x") == trace_id  # type: ignore[union-attr]
    assert with_parent.parent is not None
    assert format(with_parent.parent.span_id, "016x") == parent
    assert without.name == "resources/read shop://hours"
    assert without.parent is None


async def test_each_resolver_is_a_child_span_with_its_round(
    spans: InMemorySpanExporter, protocol_version: str
) -> None:
    async with connect(shop(), protocol_version, script=YES) as client:
        await client.call_tool("buy", {"title": "Dune"})
    finished = spans.get_finished_spans()
    resolvers = [span for span in finished if span.name == "resolve confirm"]
    calls = [span for span in finished if span.kind == SpanKind.SERVER]
    rounds = [(span.attributes or {})["mcpdi.round"] for span in resolvers]
    asks = [(span.attributes or {}).get("mcpdi.asks") for span in resolvers]
    if protocol_version == "2026-07-28":  # asked in round 1, answered (and run again) in round 2
        assert (rounds, asks) == ([1, 2], ["Elicit", "Elicit"])
    else:  # asked mid-call: one round
        assert (rounds, asks) == ([1], ["Elicit"])
    for resolver, call in zip(resolvers, calls, strict=True):
        assert resolver.parent is not None
        assert resolver.parent.span_id == call.context.span_id  # type: ignore[union-attr]
        assert resolver.context.trace_id == call.context.trace_id  # type: ignore[union-attr]


async def test_a_failing_resolver_records_its_exception(spans: InMemorySpanExporter) -> None:
    def stock() -> int:
        raise ToolError("warehouse offline")

    mcp = MCPServer("Failing")

    @mcp.tool()
    def count(n: Annotated[int, Resolve(stock)]) -> int:
        return n

    async with connect(mcp, "2026-07-28") as client:
        exchange = await client.call_tool("count", {})
    assert exchange.text == "Error executing tool count: warehouse offline"
    (resolver,) = [span for span in spans.get_finished_spans() if span.name == "resolve stock"]
    assert resolver.status.status_code == StatusCode.ERROR
    assert [event.name for event in resolver.events] == ["exception"]


# A process that serves before anything imports the trace API, then installs a tracer provider.
LATE_PROVIDER = """
import sys
import anyio
from mcpdi import MCPServer, ToolError
from mcpdi._in_memory._client import InMemoryClient

mcp = MCPServer("Shop")

@mcp.tool()
def refuse() -> str:
    raise ToolError("no stock")

async def call() -> None:
    async with mcp.running() as runner:
        await InMemoryClient(runner, protocol_version="2025-11-25").call_tool("refuse", {})

anyio.run(call)
print("before", "opentelemetry.trace" in sys.modules)

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
anyio.run(call)
for span in exporter.get_finished_spans():
    print(span.name, [event.attributes["exception.message"] for event in span.events])
"""


def test_a_provider_installed_after_the_first_calls_traces_the_next_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LATE_PROVIDER], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines() == ["before False", "tools/call refuse ['no stock']"]
