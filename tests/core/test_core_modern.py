"""The modern era (protocol 2026-07-28): envelope, discover, result stamps, per-request context."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
import pytest
from core_doubles import RecordingPeer, make_server, modern_request
from inline_snapshot import snapshot
from mcp_types import CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY

from mcpdi.lowlevel import Connection, MCPError, NoBackChannel, Runner, ServerRequestContext

pytestmark = pytest.mark.anyio

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"}}


async def test_discover_names_versions_capabilities_instructions_and_identity(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    answer = await runner.handle(
        modern_request("d1", "server/discover"), Connection.for_modern_request(), peer
    )
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": "d1",
            "result": {
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"}},
                "cacheScope": "private",
                "capabilities": {"tools": {"listChanged": False}},
                "instructions": "Test server.",
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "ttlMs": 0,
            },
        }
    )


async def test_a_listing_is_stamped_with_result_type_cache_hints_and_server_info(
    runner: Runner[Any], peer: RecordingPeer
) -> None:
    answer = await runner.handle(modern_request(1, "tools/list"), Connection.for_modern_request(), peer)
    assert answer is not None
    result = answer["result"]
    assert {key: result[key] for key in ("resultType", "ttlMs", "cacheScope", "_meta")} == {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": SERVER_INFO,
    }


async def test_a_tool_result_is_stamped_without_cache_hints(runner: Runner[Any], peer: RecordingPeer) -> None:
    message = modern_request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    answer = await runner.handle(message, Connection.for_modern_request(), peer)
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"}},
                "content": [{"text": "hi", "type": "text"}],
                "isError": False,
                "resultType": "complete",
            },
        }
    )


async def test_an_input_required_result_is_stamped_with_server_info_but_no_cache_hints() -> None:
    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        return types.InputRequiredResult(
            input_requests={"roots": types.ListRootsRequest()}, request_state="opaque", _meta={"trace": "t1"}
        )

    async with make_server(on_call_tool=call_tool).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/call", {"name": "x"}), Connection.for_modern_request(), RecordingPeer()
        )
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "_meta": {
                    "trace": "t1",
                    "io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"},
                },
                "inputRequests": {"roots": {"method": "roots/list"}},
                "requestState": "opaque",
                "resultType": "input_required",
            },
        }
    )


async def test_a_retry_carrying_request_state_is_never_cacheable() -> None:
    async def read(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=params.uri, text="x")
        ]
        return types.ReadResourceResult(contents=contents, ttl_ms=60_000, cache_scope="public")

    async with make_server(on_read_resource=read).running() as runner:
        first = await runner.handle(
            modern_request(1, "resources/read", {"uri": "file:///a"}),
            Connection.for_modern_request(),
            RecordingPeer(),
        )
        retry = await runner.handle(
            modern_request(2, "resources/read", {"uri": "file:///a", "requestState": "s"}),
            Connection.for_modern_request(),
            RecordingPeer(),
        )
    assert first is not None
    assert retry is not None
    assert (first["result"]["ttlMs"], first["result"]["cacheScope"]) == (60_000, "public")
    assert (retry["result"]["ttlMs"], retry["result"]["cacheScope"]) == (0, "private")


async def test_a_dict_result_is_completed_and_validated_at_the_request_version() -> None:
    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> Any:
        return {"tools": []}

    async with make_server(on_list_tools=list_tools).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/list"), Connection.for_modern_request(), RecordingPeer()
        )
    assert answer == snapshot(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "core-test", "version": "0.1.0"}},
                "cacheScope": "private",
                "resultType": "complete",
                "tools": [],
                "ttlMs": 0,
            },
        }
    )


@pytest.mark.parametrize(
    ("meta", "error"),
    [
        (
            None,
            snapshot(
                {
                    "code": -32602,
                    "message": "params._meta must be an object carrying the required "
                    "'io.modelcontextprotocol/protocolVersion' and "
                    "'io.modelcontextprotocol/clientCapabilities' envelope keys",
                }
            ),
        ),
        (
            {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            snapshot(
                {
                    "code": -32602,
                    "message": "params._meta is missing the required envelope key(s): "
                    "io.modelcontextprotocol/clientCapabilities",
                }
            ),
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": 2026,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            snapshot({"code": -32602, "message": "the protocol-version envelope value must be a string"}),
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            snapshot(
                {
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {
                        "supported": ["2026-07-28"],
                        "requested": "2099-01-01",
                    },
                }
            ),
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": 3},
            },
            snapshot(
                {
                    "code": -32602,
                    "message": "params._meta['io.modelcontextprotocol/clientCapabilities'] is not a "
                    "ClientCapabilities object: elicitation: Input should be a valid dictionary or "
                    "instance of ElicitationCapability",
                }
            ),
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "no-version"},
            },
            snapshot(
                {
                    "code": -32602,
                    "message": "params._meta['io.modelcontextprotocol/clientInfo'] is not an Implementation "
                    "object: version: Field required",
                }
            ),
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/logLevel": "loud",
            },
            snapshot(
                {
                    "code": -32602,
                    "message": "params._meta['io.modelcontextprotocol/logLevel'] must be one of debug, info, "
                    "notice, warning, error, critical, alert, emergency",
                }
            ),
        ),
    ],
    ids=[
        "no-meta",
        "no-capabilities",
        "version-not-a-string",
        "unsupported",
        "bad-capabilities",
        "bad-info",
        "bad-level",
    ],
)
async def test_a_defective_envelope_is_rejected_before_dispatch(
    runner: Runner[Any], peer: RecordingPeer, meta: dict[str, Any] | None, error: dict[str, Any]
) -> None:
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params}
    answer = await runner.handle(message, Connection.for_modern_request(), peer)
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": error}


@pytest.mark.parametrize(
    "method", ["ping", "initialize", "logging/setLevel", "resources/subscribe", "foo/bar"]
)
async def test_methods_that_do_not_exist_at_2026_are_method_not_found(
    runner: Runner[Any], peer: RecordingPeer, method: str
) -> None:
    answer = await runner.handle(
        modern_request(1, method, {"level": "info"}), Connection.for_modern_request(), peer
    )
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found", "data": method},
    }


def _recording_call_tool(
    seen: list[ServerRequestContext],
) -> Callable[[ServerRequestContext, types.CallToolRequestParams], Awaitable[types.CallToolResult]]:
    """A `tools/call` handler that keeps the context of every call in `seen`."""

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        seen.append(ctx)
        return types.CallToolResult(content=[])

    return call_tool


async def test_the_context_carries_the_request_envelope() -> None:
    seen: list[ServerRequestContext] = []
    call_tool = _recording_call_tool(seen)

    peer = RecordingPeer(headers={"mcp-method": "tools/call"})
    capabilities: dict[str, Any] = {"elicitation": {"form": {}}}
    async with make_server(on_call_tool=call_tool).running() as runner:
        await runner.handle(
            modern_request("r", "tools/call", {"name": "x"}, capabilities=capabilities),
            Connection.for_modern_request(),
            peer,
        )
        (ctx,) = seen
        assert ctx.lifespan_context == {}
    assert (ctx.era, ctx.protocol_version, ctx.method, ctx.request_id) == (
        "modern",
        "2026-07-28",
        "tools/call",
        "r",
    )
    assert ctx.client_capabilities == types.ClientCapabilities.model_validate(capabilities)
    assert ctx.client_info == types.Implementation(name="test-client", version="0.0.1")
    assert ctx.headers == {"mcp-method": "tools/call"}
    assert ctx.principal is None


async def test_a_handler_cannot_send_a_request_to_the_client_at_2026() -> None:
    raised: list[MCPError] = []

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            await ctx.send_request("roots/list")
        except NoBackChannel as error:
            raised.append(error)
            raise
        return types.CallToolResult(content=[])

    async with make_server(on_call_tool=call_tool).running() as runner:
        answer = await runner.handle(
            modern_request(1, "tools/call", {"name": "x"}), Connection.for_modern_request(), RecordingPeer()
        )
    assert str(raised[0]) == snapshot(
        "Cannot send 'roots/list' to the client: protocol 2026-07-28 has no server-to-client requests; "
        "return an InputRequiredResult with inputRequests instead"
    )
    assert answer is not None
    assert answer["error"]["code"] == -32600


async def test_log_messages_are_sent_only_when_the_request_opts_in() -> None:
    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        await ctx.log("debug", "noise")
        await ctx.log("warning", "careful")
        return types.CallToolResult(content=[])

    silent, opted_in = RecordingPeer(), RecordingPeer()
    async with make_server(on_call_tool=call_tool).running() as runner:
        await runner.handle(
            modern_request(1, "tools/call", {"name": "x"}), Connection.for_modern_request(), silent
        )
        opt_in = {"io.modelcontextprotocol/logLevel": "info"}
        await runner.handle(
            modern_request(2, "tools/call", {"name": "x"}, **opt_in),
            Connection.for_modern_request(),
            opted_in,
        )
    assert silent.notifications == []
    assert opted_in.notifications == [("notifications/message", {"level": "warning", "data": "careful"})]


async def test_progress_is_reported_only_for_a_request_with_a_progress_token() -> None:
    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        await ctx.report_progress(1, 2, "half")
        await ctx.report_progress(2)
        return types.CallToolResult(content=[])

    without, with_token = RecordingPeer(), RecordingPeer()
    async with make_server(on_call_tool=call_tool).running() as runner:
        await runner.handle(
            modern_request(1, "tools/call", {"name": "x"}), Connection.for_modern_request(), without
        )
        await runner.handle(
            modern_request(2, "tools/call", {"name": "x"}, progressToken="p-2"),
            Connection.for_modern_request(),
            with_token,
        )
    assert without.notifications == []
    assert with_token.notifications == [
        ("notifications/progress", {"progressToken": "p-2", "progress": 1, "total": 2, "message": "half"}),
        ("notifications/progress", {"progressToken": "p-2", "progress": 2}),
    ]


async def test_ctx_log_rejects_an_unknown_level_naming_the_valid_ones() -> None:
    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        await ctx.log("loud", "x")
        return types.CallToolResult(content=[])

    ctx = ServerRequestContext(
        lifespan_context=None,
        protocol_version="2026-07-28",
        era="modern",
        method="tools/call",
        request_id=1,
        meta=None,
        client_capabilities=None,
        client_info=None,
        connection=Connection.for_modern_request(),
        peer=RecordingPeer(),
    )
    with pytest.raises(ValueError, match="log level") as raised:
        await call_tool(ctx, types.CallToolRequestParams(name="x"))
    assert str(raised.value) == snapshot(
        "log level 'loud' is not one of debug, info, notice, warning, error, critical, alert, emergency; "
        "pass one of those to ctx.log()"
    )


async def test_each_request_gets_the_envelope_it_sent_even_after_an_equal_looking_one() -> None:
    seen: list[ServerRequestContext] = []
    call_tool = _recording_call_tool(seen)

    one = {"experimental": {"batch": {"size": 1}}}
    true = {"experimental": {"batch": {"size": True}}}  # == `one` in Python, not in JSON
    metas: list[dict[str, Any]] = [
        {"capabilities": one},
        {"capabilities": one},
        {"capabilities": true},
        {"capabilities": one, CLIENT_INFO_META_KEY: {"name": "other", "version": "2"}},
        {"capabilities": one, LOG_LEVEL_META_KEY: "error"},
        {"capabilities": one, LOG_LEVEL_META_KEY: "loud"},
    ]
    answers: list[dict[str, Any] | None] = []
    async with make_server(on_call_tool=call_tool).running() as runner:
        for i, meta in enumerate(metas):
            message = modern_request(i, "tools/call", {"name": "x"}, **meta)
            answers.append(await runner.handle(message, Connection.for_modern_request(), RecordingPeer()))
    sizes = [ctx.client_capabilities.experimental["batch"]["size"] for ctx in seen]  # type: ignore[index,union-attr]
    assert [(type(size), size) for size in sizes] == [(int, 1), (int, 1), (bool, True), (int, 1), (int, 1)]
    assert [ctx.client_info.name for ctx in seen if ctx.client_info] == [
        "test-client",
        "test-client",
        "test-client",
        "other",
        "test-client",
    ]
    assert [ctx.requested_log_level for ctx in seen] == [None, None, None, None, "error"]
    last = answers[-1]
    assert last is not None
    assert last["error"]["code"] == -32602
