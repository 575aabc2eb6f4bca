"""The 2026-07-28 HTTP exchange: statuses, headers, the rung order and SSE deferral, in process."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot
from transport_asgi import MODERN_META, http_client, modern_headers, streaming
from transport_sample_server import server

from mcpdi_transport._http import _modern as _http_modern
from mcpdi_transport._http._app import build_http_app

pytestmark = pytest.mark.anyio


def call(id_: int | str, name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": MODERN_META, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def test_discover_is_answered_as_plain_json_without_a_session() -> None:
    async with http_client(build_http_app(server)) as client:
        body = {"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": {"_meta": MODERN_META}}
        response = await client.post("/mcp", json=body, headers=modern_headers("server/discover"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["resultType"] == "complete"


async def test_an_input_required_round_is_answered_and_the_retry_completes() -> None:
    async with http_client(build_http_app(server)) as client:
        headers = modern_headers("tools/call", "greet")
        first = (await client.post("/mcp", json=call(1, "greet"), headers=headers)).json()["result"]
        assert first["resultType"] == "input_required"
        assert first["inputRequests"]["name"]["method"] == "elicitation/create"
        retry = call(
            2,
            "greet",
            inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
            requestState=first["requestState"],
        )
        second = (await client.post("/mcp", json=retry, headers=headers)).json()
    assert second["result"]["content"] == [{"type": "text", "text": "Hi, Ada!"}]


async def test_notifications_switch_the_answer_to_an_event_stream() -> None:
    async with http_client(build_http_app(server)) as client:
        body = call(3, "slow")
        body["params"]["_meta"] = {**MODERN_META, "progressToken": "p-3"}
        response = await client.post("/mcp", json=body, headers=modern_headers("tools/call", "slow"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.text.split("\r\n\r\n")[0] == snapshot(
        'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
        '"params":{"progressToken":"p-3","progress":1.0,"total":2.0,"message":"step 1"}}'
    )
    assert '"id":3,"result"' in response.text.split("\r\n\r\n")[-2]


async def test_json_response_mode_drops_notifications_and_answers_json() -> None:
    async with http_client(build_http_app(server, json_response=True)) as client:
        body = call(4, "slow")
        body["params"]["_meta"] = {**MODERN_META, "progressToken": "p-4"}
        response = await client.post("/mcp", json=body, headers=modern_headers("tools/call", "slow"))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"] == [{"type": "text", "text": "done"}]


@pytest.mark.parametrize(
    ("headers", "body", "status", "error"),
    [
        pytest.param(
            modern_headers("tools/call", "nope"),
            call(5, "echo", {"text": "x"}),
            400,
            {
                "code": -32020,
                "message": "mcp-name header does not match the request body's 'name' parameter",
            },
            id="Mcp-Name mismatch",
        ),
        pytest.param(
            modern_headers("tools/call", "query"),
            call(5, "query", {"region": "eu", "q": "x"}),
            400,
            {
                "code": -32020,
                "message": "Mcp-Param-Region header is missing "
                "but the request body's 'region' argument is present",
            },
            id="Mcp-Param missing",
        ),
        pytest.param(
            modern_headers("tools/call", "query", **{"mcp-param-region": "us"}),
            call(5, "query", {"region": "eu", "q": "x"}),
            400,
            {
                "code": -32020,
                "message": "Mcp-Param-Region header does not match the request body's 'region' argument",
            },
            id="Mcp-Param differs",
        ),
        pytest.param(
            modern_headers("ping"),
            {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"_meta": MODERN_META}},
            404,
            {"code": -32601, "message": "Method not found", "data": "ping"},
            id="method not at 2026-07-28",
        ),
        pytest.param(
            modern_headers("tools/list"),
            {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
            400,
            {
                "code": -32602,
                "message": "params._meta must be an object carrying the required "
                "'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' "
                "envelope keys",
            },
            id="no envelope",
        ),
    ],
)
async def test_rejections_carry_the_status_of_their_error_code(
    headers: dict[str, str], body: dict[str, Any], status: int, error: dict[str, Any]
) -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=body, headers=headers)
    assert (response.status_code, response.headers["content-type"]) == (status, "application/json")
    assert response.json() == {"jsonrpc": "2.0", "id": 5, "error": error}


async def test_a_matching_mcp_param_header_lets_the_call_through() -> None:
    headers = modern_headers("tools/call", "query", **{"mcp-param-region": "=?base64?WsO8cmljaA==?="})
    async with http_client(build_http_app(server)) as client:
        response = await client.post(
            "/mcp", json=call(6, "query", {"region": "Zürich", "q": "x"}), headers=headers
        )
    assert response.json()["result"]["content"][0]["text"] == "Zürich:x"


async def test_an_unsupported_version_is_refused_with_minus_32022() -> None:
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": meta}}
    headers = modern_headers("server/discover", **{"mcp-protocol-version": "2099-01-01"})
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32022
    assert response.json()["error"]["data"]["requested"] == "2099-01-01"


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_other_methods_than_post_get_405_allowing_post(method: str) -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.request(method, "/mcp", headers=modern_headers("tools/list"))
    assert (response.status_code, response.headers["allow"], response.content) == (405, "POST", b"")


@pytest.mark.parametrize(
    ("accept", "json_response", "status"),
    [
        ("application/json", False, 406),
        ("text/event-stream", False, 406),
        ("application/json", True, 200),
        ("*/*", False, 200),
    ],
)
async def test_accept_must_cover_what_the_answer_may_be(
    accept: str, json_response: bool, status: int
) -> None:
    body = {"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": MODERN_META}}
    headers = modern_headers("server/discover", accept=accept)
    async with http_client(build_http_app(server, json_response=json_response)) as client:
        response = await client.post("/mcp", json=body, headers=headers)
    assert response.status_code == status


@pytest.mark.parametrize(
    ("accepts", "status"),
    [
        (["application/json", "text/event-stream"], 200),  # what one value would say, in two
        (["Application/JSON ", " TEXT/event-stream;q=0.5"], 200),
        (["application/json", "application/json"], 406),
        (["text/html", "image/png"], 406),
    ],
)
async def test_an_accept_header_sent_more_than_once_counts_with_all_its_values(
    accepts: list[str], status: int
) -> None:
    body = {"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": MODERN_META}}
    headers = [(k, v) for k, v in modern_headers("server/discover").items() if k.lower() != "accept"]
    headers += [("accept", value) for value in accepts]
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", json=body, headers=headers)
    assert response.status_code == status


async def test_notifications_are_acknowledged_with_202_at_a_served_version() -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    async with http_client(build_http_app(server)) as client:
        accepted = await client.post("/mcp", json=body, headers=modern_headers("notifications/cancelled"))
        refused = await client.post(
            "/mcp", json=body, headers=modern_headers("x", **{"mcp-protocol-version": "2099-01-01"})
        )
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32022
    assert refused.json()["id"] is None


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (
            b"{not json",
            {"code": -32700, "message": "Parse error", "data": "key must be a string at line 1 column 2"},
        ),
        (
            b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
            {"code": -32600, "message": "Body must be a single JSON-RPC request or notification object"},
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"result":{}}',
            {"code": -32600, "message": "Body must be a single JSON-RPC request or notification object"},
        ),
    ],
)
async def test_bodies_that_are_not_one_request_get_400_with_id_null(
    raw: bytes, error: dict[str, Any]
) -> None:
    async with http_client(build_http_app(server)) as client:
        response = await client.post("/mcp", content=raw, headers=modern_headers("tools/list"))
    assert response.status_code == 400
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": error}


async def test_closing_the_stream_cancels_the_handler() -> None:
    app = build_http_app(server)
    async with http_client(app):
        async with streaming(
            app, "POST", modern_headers("tools/call", "sleep"), call(9, "sleep")
        ) as exchange:
            exchange.disconnect.set()
        assert exchange.finished.is_set()


async def test_closing_the_connection_cancels_a_handler_answering_with_plain_json() -> None:
    app = build_http_app(server, json_response=True)
    async with http_client(app):
        async with streaming(
            app, "POST", modern_headers("tools/call", "sleep"), call(11, "sleep")
        ) as exchange:
            exchange.disconnect.set()
        assert exchange.finished.is_set()
    assert exchange.status is None  # nobody is left to answer


async def test_a_quiet_handler_commits_to_sse_and_is_kept_alive_with_pings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_http_modern, "PING_INTERVAL", 0.01)
    app = build_http_app(server)
    async with (
        http_client(app),
        streaming(app, "POST", modern_headers("tools/call", "sleep"), call(10, "sleep")) as exchange,
    ):
        with anyio.fail_after(5):
            await exchange.started.wait()
            first = await exchange._chunks_out.receive()
    assert exchange.status == 200
    assert exchange.headers["content-type"] == "text/event-stream"
    assert first == b": ping\r\n\r\n"


@pytest.mark.parametrize(
    "raw", [b"\xe9", b"Z\xfcrich", b"eu\x7f"], ids=["latin-1", "latin-1-word", "control"]
)
async def test_an_mcp_param_header_with_a_raw_non_ascii_byte_is_refused(raw: bytes) -> None:
    headers: dict[str, Any] = {**modern_headers("tools/call", "query"), "mcp-param-region": raw}
    async with http_client(build_http_app(server)) as client:
        response = await client.post(
            "/mcp", json=call(7, "query", {"region": "é", "q": "x"}), headers=headers
        )
    assert response.status_code == 400
    assert response.json()["error"] == snapshot(
        {
            "code": -32020,
            "message": (
                "The mcp-param-region header holds a raw non-ASCII or control character; "
                "send such values Base64-encoded as =?base64?...?="
            ),
        }
    )


async def test_a_plain_json_answer_given_without_waiting_is_not_watched_for_the_client_leaving() -> None:
    app = build_http_app(server, json_response=True)
    async with http_client(app) as client:
        headers = modern_headers("tools/call", "echo")
        response = await client.post("/mcp", json=call(12, "echo", {"text": "hi"}), headers=headers)
        assert response.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
        running = app.state.mcpdi_drain.__self__.running  # the MCP endpoint's running state
        assert running is not None
        assert running.disconnect_ticker is None  # nothing was ever set to watch
        async with streaming(
            app, "POST", modern_headers("tools/call", "sleep"), call(13, "sleep")
        ) as exchange:
            with anyio.fail_after(5):
                while running.disconnect_ticker is None:  # the waiting handler is watched
                    await anyio.sleep(0.001)
            exchange.disconnect.set()
        assert exchange.finished.is_set()
