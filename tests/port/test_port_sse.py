"""The legacy HTTP+SSE transport: mcpdi's `sse_app()` and the SDK's, driven by the official SSE client."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.server.mcpserver import Context as SdkContext
from mcp.server.mcpserver import MCPServer as SdkMCPServer
from port_harness import serve, text
from pydantic import BaseModel, Field

import mcpdi
from mcpdi import Elicit, Resolve
from mcpdi.compat.fastmcp import FastMCP

pytestmark = pytest.mark.anyio


class Backorder(BaseModel):
    confirm: bool = Field(description="Order anyway and wait?")


def sdk_server() -> SdkMCPServer:
    mcp = SdkMCPServer("Shop")

    @mcp.tool()
    def double(x: int) -> str:
        return str(2 * x)

    @mcp.tool()
    async def greet(name: str, ctx: SdkContext) -> str:
        await ctx.info(f"greeting {name}")
        return f"Hello {name}"

    @mcp.tool()
    async def order(title: str, ctx: SdkContext) -> str:
        answer = await ctx.elicit(f"{title!r} is out of stock. Order anyway?", Backorder)
        confirmed = answer.action == "accept" and answer.data.confirm
        return f"Backordered {title!r}." if confirmed else "No order placed."

    return mcp


def mcpdi_server() -> mcpdi.MCPServer:
    mcp = mcpdi.MCPServer("Shop")

    @mcp.tool()
    def double(x: int) -> str:
        return str(2 * x)

    @mcp.tool()
    async def greet(name: str, ctx: mcpdi.Context) -> str:
        await ctx.info(f"greeting {name}")
        return f"Hello {name}"

    async def backorder(title: str) -> Elicit[Backorder]:
        return Elicit(f"{title!r} is out of stock. Order anyway?", Backorder)

    @mcp.tool()
    async def order(title: str, answer: Annotated[Backorder, Resolve(backorder)]) -> str:
        return f"Backordered {title!r}." if answer.confirm else "No order placed."

    return mcp


def servers() -> dict[str, Any]:
    return {"sdk": sdk_server(), "mcpdi": mcpdi_server()}


async def confirm(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    assert isinstance(params, mcp_types.ElicitRequestFormParams)
    assert params.message == "'Dune' is out of stock. Order anyway?"
    return mcp_types.ElicitResult(action="accept", content={"confirm": True})


async def scenario(url: str) -> dict[str, Any]:
    logs: list[str] = []

    async def log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    async with (
        sse_client(url) as (read, write),
        ClientSession(read, write, elicitation_callback=confirm, logging_callback=log) as session,
    ):
        init = await session.initialize()
        tools = await session.list_tools()
        doubled = await session.call_tool("double", {"x": 21})
        greeted = await session.call_tool("greet", {"name": "Ada"})
        ordered = await session.call_tool("order", {"title": "Dune"})
    return {
        "protocol": init.protocol_version,
        "tools": sorted(tool.name for tool in tools.tools),
        "double": text(doubled),
        "greet": text(greeted),
        "order": text(ordered),
        "logs": logs,
    }


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the SDK's ctx.info
async def test_the_official_sse_client_sees_both_servers_alike() -> None:
    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        for flavour, server in servers().items():
            async with serve(server.sse_app(), "/sse") as url:
                seen[flavour] = await scenario(url)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["double"] == "42"
    assert seen["mcpdi"]["order"] == "Backordered 'Dune'."
    assert seen["mcpdi"]["logs"] == ["greeting Ada"]


@asynccontextmanager
async def opened(base: str, http: httpx2.AsyncClient, path: str = "/sse") -> AsyncGenerator[str]:
    """Open the event stream and yield the message URL its `endpoint` event names (it stays open)."""
    async with http.stream("GET", base + path) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.aiter_lines()
        async for line in lines:
            if line.startswith("data: "):
                yield base + line.removeprefix("data: ")
                return


JSON = {"content-type": "application/json"}


async def refusals(base: str) -> list[tuple[int, str]]:
    seen: list[tuple[int, str]] = []
    async with httpx2.AsyncClient(timeout=10) as http, opened(base, http) as message_url:
        assert "/messages/?session_id=" in message_url
        session_id = message_url.rpartition("=")[2]
        for url, body in [
            (f"{base}/messages/", b"{}"),
            (f"{base}/messages/?session_id=nothex", b"{}"),
            (f"{base}/messages/?session_id={'0' * 32}", b"{}"),
            (message_url, b"{not json"),
            (message_url, b'{"jsonrpc": "2.0"}'),
            (message_url, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'),
        ]:
            response = await http.post(url, content=body, headers=JSON)
            seen.append((response.status_code, response.text))
        response = await http.get(f"{base}/messages/?session_id={session_id}")
        seen.append((response.status_code, response.headers.get("allow", "")))
    return seen


async def test_bad_session_ids_and_bodies_are_refused_as_the_sdk_does() -> None:
    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        for flavour, server in servers().items():
            async with serve(server.sse_app(), "") as base:
                seen[flavour] = await refusals(base)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"] == [
        (400, "session_id is required"),
        (400, "Invalid session ID"),
        (404, "Could not find session"),
        (400, "Could not parse message"),
        (400, "Could not parse message"),
        (202, "Accepted"),
        (405, "POST"),
    ]


async def test_a_foreign_host_is_refused_before_a_stream_opens() -> None:
    async with serve(mcpdi_server().sse_app(), "") as base, httpx2.AsyncClient(timeout=10) as http:
        response = await http.get(f"{base}/sse", headers={"host": "evil.example"})
        assert (response.status_code, response.text) == (421, "Invalid Host header")
        response = await http.get(f"{base}/sse", headers={"origin": "http://evil.example"})
        assert response.status_code == 403


class Tokens:
    async def verify_token(self, token: str) -> mcpdi.AccessToken | None:
        if token in ("alice", "bob"):
            return mcpdi.AccessToken(token=token, client_id=token, scopes=[], subject=token)
        return None


async def test_a_session_belongs_to_the_token_that_opened_it() -> None:
    auth = mcpdi.AuthSettings(issuer_url="https://auth.example", resource_server_url=None)
    server = mcpdi.MCPServer("Shop", token_verifier=Tokens(), auth=auth)
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    with anyio.fail_after(30):
        async with serve(server.sse_app(), "") as base:
            async with httpx2.AsyncClient(timeout=10) as anonymous:
                response = await anonymous.get(f"{base}/sse")
                assert response.status_code == 401
            alice = httpx2.AsyncClient(timeout=10, headers={"authorization": "Bearer alice"})
            bob = httpx2.AsyncClient(timeout=10, headers={"authorization": "Bearer bob"})
            async with alice, bob, opened(base, alice) as message_url:
                response = await bob.post(message_url, content=ping, headers=JSON)
                assert (response.status_code, response.text) == (404, "Could not find session")
                response = await alice.post(message_url, content=ping, headers=JSON)
                assert (response.status_code, response.text) == (202, "Accepted")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_run_sse_async_serves_the_official_client() -> None:
    server = mcpdi_server()
    port = free_port()
    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.run_sse_async(port=port))
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    await anyio.sleep(0.02)
            seen = await scenario(f"http://127.0.0.1:{port}/sse")
            group.cancel_scope.cancel()
    assert seen["order"] == "Backordered 'Dune'."


def test_sse_app_refuses_a_message_path_that_is_a_url_and_streamable_http_options() -> None:
    server = mcpdi_server()
    with pytest.raises(ValueError, match=r"^message_path 'http://x/' is not a relative path"):
        server.sse_app(message_path="http://x/")
    with pytest.raises(TypeError, match="stateless"):
        server.sse_app(stateless_http=True)


SCRIPT = """
import sys
from mcpdi import MCPServer

mcp = MCPServer("Shop")


@mcp.tool()
def double(x: int) -> str:
    return str(2 * x)


mcp.run("sse", port=int(sys.argv[1]))
"""


async def test_run_sse_serves_until_terminated(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    port = free_port()
    root = Path(__file__).parents[2]  # the mcpdi under test, whatever the environment installed
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = await anyio.open_process([sys.executable, str(script), str(port)], env=env)
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    assert process.returncode is None, "the server exited before listening"
                    await anyio.sleep(0.05)
            async with (
                sse_client(f"http://127.0.0.1:{port}/sse") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert text(await session.call_tool("double", {"x": 4})) == "8"
                # With the stream still open: the server ends it rather than wait for the client.
                process.terminate()
                # uvicorn shuts down cleanly, then re-raises the signal it caught, as for the SDK
                assert await process.wait() == -signal.SIGTERM
            assert process.stderr is not None
            log = b"".join([chunk async for chunk in process.stderr]).decode()
            assert "Application shutdown complete." in log
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()


async def test_v1_fastmcp_serves_sse_from_its_settings_and_names_its_mount_path() -> None:
    server = FastMCP("Shop", sse_path="/events", mount_path="/api/")

    @server.tool()
    def double(x: int) -> str:
        return str(2 * x)

    async with (
        serve(server.sse_app(), "") as base,
        httpx2.AsyncClient(timeout=10) as http,
        opened(base, http, "/events") as message_url,
    ):
        assert message_url.startswith(f"{base}/api/messages/?session_id=")
    async with (
        serve(server.sse_app(mount_path="/"), "/events") as url,
        sse_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert text(await session.call_tool("double", {"x": 5})) == "10"


def rpc(id_: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


async def test_a_cancelled_call_and_the_calls_of_a_closed_stream_stop() -> None:
    mcp = mcpdi.MCPServer("Slow")
    started: list[anyio.Event] = [anyio.Event(), anyio.Event()]
    stopped: list[anyio.Event] = [anyio.Event(), anyio.Event()]

    @mcp.tool()
    async def wait(n: int) -> str:
        started[n].set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped[n].set()
        return "never"

    init = {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with anyio.fail_after(30):
        async with serve(mcp.sse_app(), "") as base, httpx2.AsyncClient(timeout=10) as http:
            async with http.stream("GET", f"{base}/sse") as response:
                lines = response.aiter_lines()

                async def next_data() -> dict[str, Any]:
                    async for line in lines:
                        if line.startswith("data: "):
                            return json.loads(line.removeprefix("data: "))
                    raise AssertionError("the stream ended")

                message_url = ""
                async for line in lines:
                    if line.startswith("data: "):
                        message_url = base + line.removeprefix("data: ")
                        break
                for body in [rpc(1, "initialize", init), rpc(None, "notifications/initialized")]:
                    assert (await http.post(message_url, content=body, headers=JSON)).status_code == 202
                assert (await next_data())["id"] == 1
                call = rpc(2, "tools/call", {"name": "wait", "arguments": {"n": 0}})
                assert (await http.post(message_url, content=call, headers=JSON)).status_code == 202
                await started[0].wait()
                cancel = rpc(None, "notifications/cancelled", {"requestId": 2})
                assert (await http.post(message_url, content=cancel, headers=JSON)).status_code == 202
                await stopped[0].wait()
                call = rpc(3, "tools/call", {"name": "wait", "arguments": {"n": 1}})
                assert (await http.post(message_url, content=call, headers=JSON)).status_code == 202
                await started[1].wait()
            await stopped[1].wait()  # the client left: its call is cancelled
            response = await http.post(message_url, content=rpc(4, "ping"), headers=JSON)
            assert (response.status_code, response.text) == (404, "Could not find session")


async def test_a_shutdown_lets_a_running_call_finish_within_the_grace_then_ends_the_stream() -> None:
    mcp = mcpdi.MCPServer("Grace")
    started = anyio.Event()
    release = anyio.Event()

    @mcp.tool()
    async def slow() -> str:
        started.set()
        await release.wait()
        return "finished"

    app = mcp.sse_app(shutdown_grace=30)
    init = {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with anyio.fail_after(30):
        async with serve(app, "") as base, httpx2.AsyncClient(timeout=10) as http:
            async with http.stream("GET", f"{base}/sse") as response:
                lines = response.aiter_lines()
                message_url = ""
                async for line in lines:
                    if line.startswith("data: "):
                        message_url = base + line.removeprefix("data: ")
                        break
                for body in [rpc(1, "initialize", init), rpc(None, "notifications/initialized")]:
                    assert (await http.post(message_url, content=body, headers=JSON)).status_code == 202
                call = rpc(2, "tools/call", {"name": "slow", "arguments": {}})
                assert (await http.post(message_url, content=call, headers=JSON)).status_code == 202
                await started.wait()
                app.state.mcpdi_drain(30)  # what SIGTERM does under mcpdi run
                release.set()
                answers = [
                    json.loads(line.removeprefix("data: "))
                    async for line in lines
                    if line.startswith("data: ")
                ]  # the stream ends after the call's answer
            assert [answer["id"] for answer in answers] == [1, 2]
            assert answers[-1]["result"]["content"][0]["text"] == "finished"


async def test_past_max_sessions_a_new_stream_is_refused_while_every_session_is_connected() -> None:
    app = mcpdi_server().sse_app(max_sessions=1)
    with anyio.fail_after(30):
        async with serve(app, "") as base, httpx2.AsyncClient(timeout=10) as http, opened(base, http):
            response = await http.get(f"{base}/sse")
            assert (response.status_code, response.text) == (
                503,
                "Too many open sessions, each with a client connected; try again later",
            )
