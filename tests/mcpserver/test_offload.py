"""Sync resolvers of a tool: one worker-thread call for those in a row and the body, in both eras."""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import Annotated, Any

import anyio
import anyio.to_thread
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve, RoundOutcome, ToolError

from .conftest import answers, connect
from .test_telemetry import spans as spans  # the fixture with the process's tracer provider

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


class Counted:
    """The worker-thread calls of a test, and the thread each resolver ran on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.log: list[Any] = []
        self.threads: set[int] = set()
        original = anyio.to_thread.run_sync

        async def counted(fn: Any, *args: Any, **options: Any) -> Any:
            self.calls += 1
            return await original(fn, *args, **options)

        monkeypatch.setattr(anyio.to_thread, "run_sync", counted)

    def ran(self, name: str, value: Any) -> Any:
        self.log.append(name)
        self.threads.add(threading.get_ident())
        return value


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    return Counted(monkeypatch)


def bookshop(counted: Counted) -> MCPServer:
    mcp = MCPServer("Bookshop")

    def stock(title: str) -> int:
        if title == "missing":
            raise ToolError(f"{title!r} is not in the catalogue")
        return counted.ran("stock", len(title))

    def price(copies: Annotated[int, Resolve(stock)]) -> int:
        return counted.ran("price", copies * 10)

    def confirm(amount: Annotated[int, Resolve(price)]) -> Elicit[Confirm]:
        counted.ran("confirm", None)
        return Elicit(f"Pay {amount}?", Confirm)

    def charge(amount: Annotated[int, Resolve(price)]) -> int:  # cannot ask: waits for the yes
        return counted.ran("charge", amount)

    def receipt() -> Generator[str, RoundOutcome]:
        counted.ran("open receipt", None)
        outcome = yield "receipt"
        counted.log.append(("close receipt", outcome))

    @mcp.tool()
    def quote(title: str, amount: Annotated[int, Resolve(price)]) -> str:
        return counted.ran("quote", f"{title}: {amount}")

    @mcp.tool()
    def buy(
        title: str,
        ok: Annotated[Confirm, Resolve(confirm)],
        paid: Annotated[int, Resolve(charge)],
    ) -> str:
        return counted.ran("buy", f"{title}: paid {paid}" if ok.ok else "not bought")

    @mcp.tool()
    def keep(
        title: str, slip: Annotated[str, Resolve(receipt)], amount: Annotated[int, Resolve(price)]
    ) -> str:
        return counted.ran("keep", f"{slip} {amount}")

    return mcp


YES = answers(elicit={"action": "accept", "content": {"ok": True}})
NO = answers(elicit={"action": "decline"})


async def test_a_tools_sync_resolvers_and_its_sync_body_share_one_worker_thread_call(
    counted: Counted, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version) as client:
        counted.calls = 0
        exchange = await client.call_tool("quote", {"title": "Dune"})
    assert exchange.text == "Dune: 40"
    assert counted.log == ["stock", "price", "quote"]
    assert counted.calls == 1
    assert len(counted.threads) == 1
    assert threading.get_ident() not in counted.threads


async def test_a_sync_resolver_failing_in_a_hop_fails_the_call_and_nothing_after_it_runs(
    counted: Counted, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version) as client:
        exchange = await client.call_tool("quote", {"title": "missing"})
    assert exchange.text == "Error executing tool quote: 'missing' is not in the catalogue"
    assert counted.log == []


async def test_a_sync_resolver_asking_in_a_hop_suspends_the_round_and_the_charge_waits_for_yes(
    counted: Counted, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version, script=YES) as client:
        exchange = await client.call_tool("buy", {"title": "Dune"})
    assert exchange.text == "Dune: paid 40"
    assert [params["message"] for _, params in exchange.asked if params] == ["Pay 40?"]
    assert counted.log.count("charge") == 1
    assert counted.log.index("charge") > counted.log.index("confirm")
    assert counted.log[-1] == "buy"


async def test_a_declined_question_from_a_sync_resolver_never_charges(
    counted: Counted, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version, script=NO) as client:
        exchange = await client.call_tool("buy", {"title": "Dune"})
    assert exchange.response["result"]["isError"] is True
    assert "charge" not in counted.log
    assert "buy" not in counted.log


async def test_a_sync_cleanup_resolver_is_closed_after_a_body_that_ran_in_a_hop(
    counted: Counted, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version) as client:
        exchange = await client.call_tool("keep", {"title": "Dune"})
    assert exchange.text == "receipt 40"
    assert counted.log == [
        "open receipt",
        "stock",
        "price",
        "keep",
        ("close receipt", RoundOutcome.COMPLETED),
    ]


async def test_a_call_cancelled_while_a_sync_resolver_runs_starts_no_further_resolver_nor_the_body(
    counted: Counted,
) -> None:
    started = threading.Event()
    release = threading.Event()
    mcp = MCPServer("Slow")

    def slow(title: str) -> int:
        started.set()
        release.wait(5)
        return counted.ran("slow", 1)

    def after(x: Annotated[int, Resolve(slow)]) -> int:
        return counted.ran("after", x)

    @mcp.tool()
    def lookup(title: str, x: Annotated[int, Resolve(after)]) -> str:
        return counted.ran("body", title)

    answered: list[Any] = []
    async with connect(mcp, "2025-11-25") as client:
        connection = await client.connection()
        call = {
            "jsonrpc": "2.0",
            "id": 41,
            "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"title": "Dune"}},
        }
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41}}

        async def serve() -> None:
            answered.append(await client.runner.handle(call, connection, client.peer))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(serve)
                await anyio.to_thread.run_sync(started.wait, 5)
                assert await client.runner.handle(cancel, connection, client.peer) is None
                release.set()
        assert answered == [None]
        assert connection.in_flight == {}
    assert counted.log == ["slow"]


async def test_each_sync_resolver_of_a_hop_is_a_child_span_of_the_tool_call(
    counted: Counted, spans: InMemorySpanExporter, protocol_version: str
) -> None:
    async with connect(bookshop(counted), protocol_version) as client:
        counted.calls = 0
        await client.call_tool("quote", {"title": "Dune"})
    assert counted.calls == 1
    finished = spans.get_finished_spans()
    (call,) = [span for span in finished if span.kind == SpanKind.SERVER]
    resolvers = [span for span in finished if span.name.startswith("resolve ")]
    assert [span.name for span in resolvers] == ["resolve stock", "resolve price"]
    for span in resolvers:
        assert span.parent is not None
        assert span.parent.span_id == call.context.span_id  # type: ignore[union-attr]
        assert span.context.trace_id == call.context.trace_id  # type: ignore[union-attr]
        assert (span.attributes or {})["mcpdi.round"] == 1


async def test_an_override_runs_in_the_hop_and_an_async_one_splits_it(
    counted: Counted, protocol_version: str
) -> None:
    mcp = MCPServer("Overridden")

    def stock(title: str) -> int:
        return counted.ran("stock", len(title))

    def price(copies: Annotated[int, Resolve(stock)]) -> int:
        return counted.ran("price", copies * 10)

    @mcp.tool()
    def quote(title: str, amount: Annotated[int, Resolve(price)]) -> str:
        return counted.ran("quote", f"{title}: {amount}")

    def fake_stock(title: str) -> int:
        return counted.ran("fake stock", 1)

    async def fake_price(copies: Annotated[int, Resolve(stock)]) -> int:
        return counted.ran("fake price", copies)

    async with connect(mcp, protocol_version) as client:
        with mcp.override(stock, fake_stock):
            counted.calls = 0
            assert (await client.call_tool("quote", {"title": "Dune"})).text == "Dune: 10"
            assert counted.calls == 1
        with mcp.override(price, fake_price):
            counted.calls = 0
            assert (await client.call_tool("quote", {"title": "Dune"})).text == "Dune: 4"
            assert counted.calls == 2  # stock, then the body: the async price runs on the loop between
    assert counted.log == ["fake stock", "price", "quote", "stock", "fake price", "quote"]
