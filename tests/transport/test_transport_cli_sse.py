"""`mcpdi run --transport sse` and the session limits' flags, served as a process over real HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp import ClientSession
from mcp import MCPError as SdkError
from mcp.client.sse import sse_client
from transport_asgi import LEGACY_HEADERS, initialize_body
from transport_cli_processes import StderrLines, start, stop

from mcpdi_transport._cli import _parser  # pyright: ignore[reportPrivateUsage]
from mcpdi_transport._run_options import RunOptions
from mcpdi_transport._workers import ConfigurationError

pytestmark = pytest.mark.anyio

SERVER = """
from mcpdi import AccessToken, AuthSettings, MCPServer


class Tokens:
    async def verify_token(self, token):
        if token == "alice":
            return AccessToken(token=token, client_id="alice", scopes=[], subject="alice")
        return None


mcp = MCPServer(
    "Shop",
    token_verifier=Tokens(),
    auth=AuthSettings(issuer_url="https://auth.example", resource_server_url=None),
)


@mcp.tool()
def double(x: int) -> str:
    return str(2 * x)
"""

OPEN = """
from mcpdi import MCPServer

mcp = MCPServer("Open")
"""


def served(tmp_path: Path, source: str, *flags: str) -> tuple[object, str]:
    (tmp_path / "server.py").write_text(source)
    process = start("run", "server.py", "--port", "0", "--log-level", "warning", *flags, cwd=tmp_path)
    seen = StderrLines(process).until("Serving")
    return process, re.findall(r"http://127\.0\.0\.1:\d+\S*", seen)[-1]


async def test_run_over_sse_serves_the_official_client_and_refuses_a_request_without_a_token(
    tmp_path: Path,
) -> None:
    process, url = served(tmp_path, SERVER, "--transport", "sse")
    try:
        assert url.endswith("/sse")
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as anonymous:
                response = await anonymous.get(url)
                assert response.status_code == 401
                assert response.headers["www-authenticate"].startswith("Bearer")
            async with (
                sse_client(url, headers={"authorization": "Bearer alice"}) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("double", {"x": 21})
                assert result.content[0].text == "42"  # type: ignore[union-attr]
    finally:
        stop(process)  # type: ignore[arg-type]


async def test_max_sessions_per_peer_refuses_the_next_session_over_http_and_sse(tmp_path: Path) -> None:
    process, url = served(tmp_path, OPEN, "--transport", "http", "--max-sessions-per-peer", "2")
    try:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                statuses = [
                    (await http.post(url, json=initialize_body(), headers=LEGACY_HEADERS)).status_code
                    for _ in range(3)
                ]
                refused = await http.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
        assert statuses == [200, 200, 429]
        assert "max_sessions_per_peer=2" in refused.text
    finally:
        stop(process)  # type: ignore[arg-type]
    process, url = served(tmp_path, OPEN, "--transport", "sse", "--max-sessions-per-peer", "1")
    try:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http, http.stream("GET", url) as first:
                assert first.status_code == 200
                second = await http.get(url)
                assert second.status_code == 429
                assert "max_sessions_per_peer=1" in second.text
    finally:
        stop(process)  # type: ignore[arg-type]


def options(*argv: str) -> RunOptions:
    return RunOptions.from_args(_parser().parse_args(["run", "server.py", *argv]))


@pytest.mark.parametrize(
    ("argv", "start_of_problem"),
    [
        (
            ["--workers", "2", "--redis", "redis://127.0.0.1:6379/0"],
            "--workers needs --transport http: an HTTP+SSE",
        ),
        (
            ["--shared-sessions", "--redis", "redis://127.0.0.1:6379/0"],
            "--shared-sessions needs --transport http",
        ),
        (["--session-prefix", "eu1-"], "--session-prefix applies to --transport http only"),
        (["--max-buffered-bytes", "1MiB"], "--max-buffered-bytes applies to --transport http only"),
    ],
)
def test_sse_refuses_what_needs_more_than_one_process_or_a_session_header(
    argv: list[str], start_of_problem: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        options("--transport", "sse", *argv)
    assert str(refused.value).startswith(start_of_problem)


def test_the_limit_flags_reach_serve_sse_and_serve_http_only_when_given() -> None:
    sse = options("--transport", "sse", "--max-sessions", "5", "--max-body-size", "64KiB", "--grace", "1")
    keywords = sse.serve_http_keywords()
    assert (keywords["sse_path"], keywords["max_sessions"], keywords["max_body_size"]) == ("/sse", 5, 65536)
    assert keywords["shutdown_grace"] == 1.0
    plain = options("--transport", "http").serve_http_keywords()
    assert "max_sessions" not in plain
    assert plain["path"] == "/mcp"
    with pytest.raises(SystemExit):
        options("--transport", "http", "--max-body-size", "lots")


ASKING = """
from pydantic import BaseModel

from mcpdi import AcceptedElicitation, Context, MCPServer

mcp = MCPServer("Greeter")


class Name(BaseModel):
    name: str


@mcp.tool()
async def greet(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", Name)
    return f"Hi, {answer.data.name}!" if isinstance(answer, AcceptedElicitation) else answer.action
"""


async def test_max_pending_client_requests_fails_a_call_that_asks_past_it(tmp_path: Path) -> None:
    process, url = served(tmp_path, ASKING, "--transport", "http", "--max-pending-client-requests", "1")
    asked = anyio.Event()
    release = anyio.Event()

    async def held(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    answered: list[str] = []
    try:
        with anyio.fail_after(30):
            async with (
                SdkClient(url, mode="legacy", elicitation_callback=held) as first,
                SdkClient(url, mode="legacy", elicitation_callback=held) as second,
                anyio.create_task_group() as group,
            ):

                async def greet_first() -> None:
                    result = await first.call_tool("greet", {})
                    answered.append(result.content[0].text)  # type: ignore[union-attr]

                group.start_soon(greet_first)
                await asked.wait()
                with pytest.raises(SdkError) as refused:
                    await second.call_tool("greet", {})
                release.set()
                assert refused.value.error.code == -32603
                assert "1 requests to clients already wait for an answer (max_pending_client_requests)" in (
                    refused.value.error.message
                )
        assert answered == ["Hi, Ada!"]
    finally:
        stop(process)  # type: ignore[arg-type]
