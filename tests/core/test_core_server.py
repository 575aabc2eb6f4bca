"""The low-level `Server`: lifespan, capabilities, custom methods, schema lookup and the lazy transports."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from core_doubles import ECHO, RecordingPeer, handshake, make_server, modern_request, request
from inline_snapshot import snapshot
from pydantic import BaseModel

import mcpdi_transport
from mcpdi.lowlevel import Connection, Server, ServerRequestContext

pytestmark = pytest.mark.anyio

Ctx = ServerRequestContext
PageParams = types.PaginatedRequestParams


async def test_the_lifespan_is_entered_once_and_its_value_reaches_every_handler() -> None:
    events: list[str] = []
    seen: list[Any] = []

    @asynccontextmanager
    async def lifespan(server: Server[dict[str, str]]) -> AsyncGenerator[dict[str, str]]:
        events.append(f"enter {server.name}")
        yield {"db": "connected"}
        events.append("exit")

    async def list_tools(ctx: Ctx[dict[str, str]], params: PageParams | None) -> types.ListToolsResult:
        seen.append(ctx.lifespan_context)
        return types.ListToolsResult(tools=[])

    server = Server("life", lifespan=lifespan, on_list_tools=list_tools)
    async with server.running() as runner:
        assert runner.lifespan_context == {"db": "connected"}
        for id_ in (1, 2):
            await runner.handle(
                modern_request(id_, "tools/list"), Connection.for_modern_request(), RecordingPeer()
            )
        assert events == ["enter life"]
    assert events == ["enter life", "exit"]
    assert seen == [{"db": "connected"}, {"db": "connected"}]


async def test_capabilities_follow_the_handlers_that_are_set() -> None:
    async def complete(ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        return types.CompleteResult(completion=types.Completion(values=[]))

    async def list_prompts(ctx: Ctx, params: PageParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    async def list_resources(ctx: Ctx, params: PageParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    server = Server(
        "caps", on_completion=complete, on_list_prompts=list_prompts, on_list_resources=list_resources
    )
    assert server.capabilities("legacy").model_dump(by_alias=True, exclude_none=True) == snapshot(
        {
            "logging": {},
            "prompts": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "completions": {},
        }
    )
    assert server.capabilities("modern").model_dump(by_alias=True, exclude_none=True) == snapshot(
        {
            "prompts": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "completions": {},
        }
    )
    assert Server("bare").capabilities().model_dump(by_alias=True, exclude_none=True) == {"logging": {}}


async def test_a_custom_method_is_served_in_both_eras() -> None:
    class Params(BaseModel):
        word: str

    async def shout(ctx: Ctx, params: Params) -> dict[str, Any]:
        return {"loud": params.word.upper()}

    server = make_server()
    server.add_request_handler("example/shout", Params, shout)
    peer = RecordingPeer()
    async with server.running() as runner:
        legacy = Connection.for_stream()
        await handshake(runner, legacy, peer)
        old = await runner.handle(request(1, "example/shout", {"word": "hi"}), legacy, peer)
        new = await runner.handle(
            modern_request(2, "example/shout", {"word": "hi"}), Connection.for_modern_request(), peer
        )
    assert old == {"jsonrpc": "2.0", "id": 1, "result": {"loud": "HI"}}
    assert new == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "loud": "HI",
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"}},
            },
        }
    )


def test_the_built_in_methods_cannot_be_replaced() -> None:
    async def answer(ctx: Ctx, params: types.RequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    with pytest.raises(ValueError, match="initialize") as raised:
        Server("x").add_request_handler("initialize", types.RequestParams, answer)
    assert str(raised.value) == snapshot(
        "'initialize' is answered by the server itself and cannot be replaced; "
        "pass instructions=/on_set_logging_level= to Server(...) instead"
    )


async def test_the_schema_lookup_pages_through_the_listing_with_the_callers_envelope() -> None:
    cursors: list[str | None] = []
    metas: list[Any] = []
    later = types.Tool(
        name="later", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}}
    )

    async def list_tools(ctx: Ctx, params: PageParams | None) -> types.ListToolsResult:
        assert params is not None
        cursors.append(params.cursor)
        metas.append(ctx.meta)
        if params.cursor is None:
            return types.ListToolsResult(tools=[ECHO], next_cursor="page-2")
        return types.ListToolsResult(tools=[later])

    envelope = modern_request(0, "tools/call")["params"]["_meta"]
    async with make_server(on_list_tools=list_tools).running() as runner:
        schema = await runner.tool_input_schema("later", meta=envelope)
    assert schema == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert cursors == [None, "page-2"]
    assert metas == [envelope, envelope]


async def test_the_schema_lookup_gives_up_on_a_cursor_loop() -> None:
    calls: list[str | None] = []

    async def list_tools(ctx: Ctx, params: PageParams | None) -> types.ListToolsResult:
        assert params is not None
        calls.append(params.cursor)
        return types.ListToolsResult(tools=[], next_cursor="same")

    async with make_server(on_list_tools=list_tools).running() as runner:
        assert await runner.tool_input_schema("echo") is None
    assert calls == [None, "same"]


async def test_the_schema_lookup_is_skipped_when_the_listing_or_getter_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken_listing(ctx: Ctx, params: PageParams | None) -> types.ListToolsResult:
        raise RuntimeError("listing broke")

    def broken_getter(name: str) -> dict[str, Any] | None:
        raise RuntimeError("getter broke")

    async with make_server(on_list_tools=broken_listing).running() as runner:
        assert await runner.tool_input_schema("echo") is None
    async with make_server(get_tool_input_schema=broken_getter).running() as runner:
        assert await runner.tool_input_schema("echo") is None
    async with Server("no-tools").running() as runner:
        assert await runner.tool_input_schema("echo") is None
    assert "listing broke" in caplog.text
    assert "getter broke" in caplog.text


def test_run_hands_the_server_to_the_chosen_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, str, dict[str, Any]]] = []

    def run_server(server: Any, transport: str, **options: Any) -> None:
        calls.append((server, transport, options))

    monkeypatch.setattr(mcpdi_transport, "run_server", run_server, raising=False)
    server = make_server()
    server.run()
    server.run("streamable-http", port=9999)
    assert calls == [
        (server, "stdio", {"host": "127.0.0.1", "port": 8000}),
        (server, "streamable-http", {"host": "127.0.0.1", "port": 9999}),
    ]
    with pytest.raises(ValueError, match="unknown transport"):
        server.run("carrier-pigeon")  # type: ignore[arg-type]
