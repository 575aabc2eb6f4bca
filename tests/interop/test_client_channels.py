"""The client's transports against real sockets and processes: HTTP sessions and SSE, stdio lifecycle."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from inline_snapshot import snapshot
from interop_servers import mcpdi_app, sdk_app, serve_app

from mcpdi import MCPError
from mcpdi_transport import Client, StdioTarget
from mcpdi_transport._client._callbacks import RequestContext
from mcpdi_transport._client._channel import ConnectionLost

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

INITIALIZED: dict[str, Any] = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "old-http", "version": "1"},
}


class LegacyOnlyServer:
    """An ASGI server from before 2026: plain-text 400 for unknown traffic, sessions, SSE replies."""

    def __init__(self, *, forget_after: int | None = None) -> None:
        self.log: list[tuple[str, str, dict[str, str]]] = []
        self.sessions = 0
        self.forget_after = forget_after

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers: dict[str, str] = {k.decode(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message: dict[str, Any] = json.loads(body) if body else {}
        self.log.append((scope["method"], message.get("method", ""), headers))
        if scope["method"] == "DELETE":
            await _reply(send, 200, b"", "text/plain")
        elif message.get("method") == "initialize":
            self.sessions += 1
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": INITIALIZED}
            await _reply(
                send, 200, json.dumps(reply).encode(), "application/json", session=f"s-{self.sessions}"
            )
        elif "mcp-session-id" not in headers:
            await _reply(send, 400, b"Bad Request: no session", "text/plain")
        elif (
            self.forget_after is not None
            and len(self.log) > self.forget_after
            and headers["mcp-session-id"] == "s-1"
        ):
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
            await _reply(send, 404, json.dumps(error).encode(), "application/json")
        elif "id" not in message:
            await _reply(send, 202, b"", "text/plain")
        else:
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "x"},
            }
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
            stream = f": keep-alive\n\nid: 1\ndata:\n\nevent: message\ndata: {json.dumps(progress)}\n\n"
            stream += f"event: message\ndata: {json.dumps(reply)}\n\n"
            await _reply(send, 200, stream.encode(), "text/event-stream")


async def _reply(send: Any, status: int, body: bytes, content_type: str, session: str | None = None) -> None:
    headers = [(b"content-type", content_type.encode())]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def test_auto_mode_falls_back_on_a_plain_400_and_then_keeps_the_session() -> None:
    server = LegacyOnlyServer()
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with anyio.fail_after(20):
        async with serve_app(server) as url, Client(url, logging_callback=on_log) as client:
            assert (client.era, client.protocol_version) == ("legacy", "2025-06-18")
            assert (await client.list_tools()).tools == []
    calls = [(verb, method) for verb, method, _ in server.log]
    assert calls == [
        ("POST", "server/discover"),
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("POST", "tools/list"),
        ("DELETE", ""),
    ]
    discover_headers = server.log[0][2]
    assert (discover_headers["mcp-protocol-version"], discover_headers["mcp-method"]) == (
        "2026-07-28",
        "server/discover",
    )
    assert discover_headers["accept"] == "application/json, text/event-stream"
    for _, _, headers in server.log[2:]:
        assert (headers["mcp-session-id"], headers["mcp-protocol-version"]) == ("s-1", "2025-06-18")
    assert "mcp-session-id" not in server.log[1][2]
    assert logs == ["x"]


async def test_a_session_the_server_forgot_is_replaced_by_a_new_initialize() -> None:
    server = LegacyOnlyServer(forget_after=3)
    with anyio.fail_after(20):
        async with serve_app(server) as url, Client(url, mode="legacy") as client:
            await client.list_tools()
            await client.list_tools()
    calls = [(verb, method, headers.get("mcp-session-id")) for verb, method, headers in server.log]
    assert calls == [
        ("POST", "initialize", None),
        ("POST", "notifications/initialized", "s-1"),
        ("POST", "tools/list", "s-1"),
        ("POST", "tools/list", "s-1"),
        ("POST", "initialize", None),
        ("POST", "notifications/initialized", "s-2"),
        ("POST", "tools/list", "s-2"),
        ("DELETE", "", "s-2"),
    ]


async def test_custom_headers_ride_on_every_http_request() -> None:
    server = LegacyOnlyServer()
    with anyio.fail_after(20):
        async with (
            serve_app(server) as url,
            Client(url, mode="legacy", headers={"Authorization": "Bearer t"}),
        ):
            pass
    assert all(headers["authorization"] == "Bearer t" for _, _, headers in server.log)


async def test_an_unreachable_url_is_a_connection_error_not_an_era_verdict() -> None:
    with anyio.fail_after(20):
        async with serve_app(LegacyOnlyServer()) as url:
            pass  # the port is free again once the server stopped
        with pytest.raises(ConnectionLost):
            async with Client(url):
                pass


async def test_a_stdio_server_that_dies_mid_request_fails_the_request_with_its_exit_code() -> None:
    script = (
        "import sys, json\n"
        "line = sys.stdin.readline()\n"
        "print('booting', file=sys.stderr)\n"
        "msg = json.loads(line)\n"
        "error = {'code': -32601, 'message': 'nope'}\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'error': error}))\n"
        "sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
        "sys.exit(3)\n"
    )
    with anyio.fail_after(20), pytest.raises(ConnectionLost) as caught:
        async with Client([sys.executable, "-c", script]):
            pass
    assert str(caught.value) == snapshot("No answer to 'initialize': the server process exited with code 3")


ENV_NAMED_SERVER = (
    "import os\nfrom mcpdi import MCPServer\nMCPServer(os.environ.get('MCPDI_TEST', 'unset')).run()\n"
)


async def test_a_stdio_target_can_be_a_command_line_or_a_stdio_target_with_its_environment(
    tmp_path: Path,
) -> None:
    script = tmp_path / "named_by_env.py"
    script.write_text(ENV_NAMED_SERVER)
    line = f"{sys.executable} {script}"
    target = StdioTarget(sys.executable, (str(script),), env={"MCPDI_TEST": "from-env"})
    names: list[str] = []
    with anyio.fail_after(30):
        for each in (line, target):
            async with Client(each, mode="legacy") as client:
                assert client.server_info is not None
                names.append(client.server_info.name)
    assert names == ["unset", "from-env"]


async def test_a_modern_http_error_body_is_raised_with_its_code(mcpdi_http_url: str) -> None:
    with anyio.fail_after(20):
        async with Client(mcpdi_http_url, mode="2026-07-28") as client:
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("no-such-prompt")
    assert caught.value.code == -32602


async def name_please(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize("kind", ["sdk", "mcpdi"])
@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
async def test_plain_json_responses_carry_every_round_of_a_modern_call(kind: str, mode: str) -> None:
    app = (sdk_app if kind == "sdk" else mcpdi_app)(json_response=True)
    with anyio.fail_after(20):
        async with serve_app(app) as url, Client(url, mode=mode, elicitation_callback=name_please) as client:
            result = await client.call_tool("greet", {"greeting": "Hi"})
    assert result.content == [types.TextContent(type="text", text="Hi, Ada!")]


@pytest.mark.parametrize("kind", ["sdk", "mcpdi"])
async def test_plain_json_responses_serve_a_legacy_session(kind: str) -> None:
    app = (sdk_app if kind == "sdk" else mcpdi_app)(json_response=True)
    with anyio.fail_after(20):
        async with serve_app(app) as url, Client(url, mode="legacy") as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


@pytest.mark.parametrize("kind", ["sdk", "mcpdi"])
async def test_concurrent_calls_on_one_stdio_connection_each_get_their_own_answer(
    kind: str, request: pytest.FixtureRequest
) -> None:
    command: list[str] = request.getfixturevalue(f"{kind}_stdio_command")
    results: dict[int, Any] = {}
    with anyio.fail_after(30):
        async with Client(command) as client:

            async def add(n: int) -> None:
                results[n] = (await client.call_tool("add", {"a": n, "b": 100})).structured_content

            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(add, n)
    assert results == {n: {"result": n + 100} for n in range(8)}
