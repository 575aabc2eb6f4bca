"""Hostile HTTP input: every failure is answered on its own request, and the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from inline_snapshot import snapshot
from transport_asgi import (
    LEGACY_HEADERS,
    MODERN_META,
    http_client,
    modern_headers,
    streaming,
)
from transport_asgi import open_legacy_session as open_session
from transport_sample_server import server

from mcpdi_transport._http._app import build_http_app

pytestmark = pytest.mark.anyio

LONE_SURROGATE_ID = (
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"x","version":"0"}}}'
)


def sse_messages(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.split("\r\n") if line.startswith("data: {")]


async def legacy_tools_list_works(client: httpx2.AsyncClient) -> bool:
    headers = await open_session(client)
    listed = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers=headers
    )
    if listed.status_code != 200:
        return False
    is_sse = listed.headers["content-type"] == "text/event-stream"
    answer = sse_messages(listed.text)[0] if is_sse else listed.json()
    return "echo" in {tool["name"] for tool in answer["result"]["tools"]}


def modern_call(name: str, arguments: dict[str, Any] | None = None, id_: Any = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}, "_meta": MODERN_META}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def test_a_lone_surrogate_id_on_initialize_is_a_parse_error_and_the_server_lives_on() -> None:
    async with http_client(build_http_app(server)) as client:
        refused = await client.post("/mcp", content=LONE_SURROGATE_ID, headers=LEGACY_HEADERS)
        assert await legacy_tools_list_works(client)
    assert refused.status_code == 400
    assert refused.json() == snapshot(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error",
                "data": "a string holds a lone surrogate escape (\\ud800-\\udfff unpaired), which is no text",
            },
        }
    )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/\\udfff"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800"}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":NaN}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":-Infinity}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e999}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":[-2E+400]}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":{"m":1.5e+000999}}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":'
        + b"9" * 400
        + b".5}}}",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"} trailing',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\xff"}}',
    ],
    ids=[
        "surrogate-method",
        "surrogate-argument",
        "nan",
        "infinity",
        "1e999",
        "-2E+400",
        "1.5e+000999",
        "400 digits",
        "trailing-data",
        "invalid-utf8",
    ],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_json_the_spec_does_not_allow_is_a_parse_error_in_both_eras(raw: bytes, era: str) -> None:
    async with http_client(build_http_app(server)) as client:
        if era == "legacy":
            headers = await open_session(client)
        else:
            headers = modern_headers("tools/call", "echo")
        refused = await client.post("/mcp", content=raw, headers=headers)
        assert await legacy_tools_list_works(client)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32700


@pytest.mark.parametrize("tool", ["huge", "surrogate"])
async def test_a_legacy_answer_that_cannot_be_encoded_becomes_an_internal_error_on_its_own_stream(
    tool: str,
) -> None:
    async with http_client(build_http_app(server)) as client:
        headers = await open_session(client)
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
        answered = await client.post("/mcp", json=body, headers=headers)
        assert await legacy_tools_list_works(client)
    assert answered.status_code == 200
    assert sse_messages(answered.text) == snapshot(
        [
            {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {
                    "code": -32603,
                    "message": "Internal error: the response could not be encoded as JSON",
                },
            }
        ]
    )


@pytest.mark.parametrize("tool", ["huge", "surrogate"])
@pytest.mark.parametrize("json_response", [True, False])
async def test_a_modern_answer_that_cannot_be_encoded_is_a_json_rpc_error_not_a_500(
    tool: str, json_response: bool
) -> None:
    async with http_client(build_http_app(server, json_response=json_response)) as client:
        answered = await client.post(
            "/mcp", json=modern_call(tool), headers=modern_headers("tools/call", tool)
        )
        assert await legacy_tools_list_works(client)
    assert answered.status_code == 200
    assert answered.json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Internal error: the response could not be encoded as JSON"},
    }


@pytest.mark.parametrize(
    "last_event_id",
    [b"get-" + b"7" * 5000, b"get-\xb2", b"get-\xd9\xa3", b"get--1", b"get-"],
    ids=["5000-digits", "superscript-two", "arabic-indic-three", "negative", "empty"],
)
async def test_odd_last_event_ids_resume_nothing_and_fail_nothing(last_event_id: bytes) -> None:
    app = build_http_app(server)
    async with http_client(app) as client:
        headers = await open_session(client)
        async with streaming(app, "GET", headers) as standalone:
            with anyio.fail_after(5):
                await standalone.started.wait()
            async with streaming(app, "GET", {**headers, "last-event-id": last_event_id}) as resumed:
                with anyio.fail_after(5):
                    await resumed.started.wait()
        assert await legacy_tools_list_works(client)
    assert standalone.status == 200
    # Not a resume: a second standalone stream while one is open is a conflict, as without the header.
    assert resumed.status == 409
