"""Every option a server carries, through every way of serving it over HTTP: one real process per column.

Rows are the options (`ServingOptions`' fields, the MCP-layer features the server object holds,
and the entry-point keywords); columns are the entry points. Each cell asserts the option's
observable effect on the wire. `test_every_option_has_a_row` derives the option list from the
code, so an option added without a row fails.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "scale"))
from handshake_http import request  # pyright: ignore[reportMissingImports]
from scale_services import call_tool, free_port, redis_server  # pyright: ignore[reportMissingImports]

from mcpdi.lowlevel import ServingOptions
from mcpdi_transport import build_http_app, serve_http

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SERVER = HERE / "compose_server.py"
GOOD_TOKEN = "matrix-good-token"
CLIENT = {"name": "matrix", "version": "0"}
BEARER = {"authorization": f"Bearer {GOOD_TOKEN}"}
CLI_OPTIONS = (
    "--path", "/rpc",
    "--allow-host", "127.0.0.1:*", "--allow-host", "mcp.test:*",
    "--allow-origin", "https://app.test",
    "--session-prefix", "cell-",
    "--log-level", "warning",
)  # fmt: skip


@dataclass(frozen=True)
class Column:
    name: str
    command: Callable[[int, str], list[str]]
    """The argv serving the server on a port (the Redis URL as second argument)."""
    takes_options: bool = True
    """Whether the entry point was given the matrix's keyword options (path /rpc, allow-lists, ...)."""


def _entry(name: str) -> Column:
    return Column(name, lambda port, _: [sys.executable, str(HERE / "compose_entry.py"), name, str(port)])


def _cli(name: str, *extra: str, redis: bool = False) -> Column:
    def command(port: int, redis_url: str) -> list[str]:
        argv = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER), "--transport", "http"]
        argv += ["--port", str(port), *CLI_OPTIONS, *extra]
        return [*argv, "--redis", redis_url] if redis else argv

    return Column(name, command)


COLUMNS = (
    _entry("streamable_http_app"),
    _entry("lowlevel.streamable_http_app"),
    _entry("build_http_app"),
    _entry("serve_http"),
    _entry("mcp.run"),
    _cli("mcpdi run"),
    _cli("mcpdi run --workers 2", "--workers", "2", redis=True),
    _cli("mcpdi run --shared-sessions", "--shared-sessions", redis=True),
    _cli("mcpdi run --reload", "--reload"),
    Column(
        "mcpdi dev",
        lambda port, _: [sys.executable, "-m", "mcpdi_transport", "dev", str(SERVER), "--port", str(port)],
        takes_options=False,
    ),
)


@dataclass(frozen=True)
class Cell:
    column: Column
    base: str

    @property
    def path(self) -> str:
        return "/rpc" if self.column.takes_options else "/mcp"

    @property
    def url(self) -> str:
        return self.base + self.path


def _wait_until_served(base: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    """Poll until an HTTP answer comes (a worker or a reload child may come after the socket)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args!r} exited with {process.returncode}:\n{log.read_text()}")
        try:
            httpx2.get(f"{base}/healthz", timeout=5)
        except httpx2.TransportError:
            pass
        else:
            return
        time.sleep(0.05)
    pytest.fail(f"{process.args!r} did not serve within {timeout} s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as redis:
        yield redis.url


@pytest.fixture(scope="module", params=COLUMNS, ids=[column.name for column in COLUMNS])
def cell(
    request: pytest.FixtureRequest, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cell]:
    column: Column = request.param
    port = free_port()
    log = tmp_path_factory.mktemp("cell") / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            column.command(port, redis_url),
            cwd=HERE,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # --workers and --reload run children: end the whole group
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_served(base, process, log)
        yield Cell(column, base)
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait(timeout=5)


# -- the requests -------------------------------------------------------------------------

INITIALIZE = request(
    1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
)
POST_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _initialize(cell: Cell, **headers: str) -> httpx2.Response:
    return httpx2.post(cell.url, content=INITIALIZE, headers={**POST_HEADERS, **headers}, timeout=30)


def _report(cell: Cell) -> dict[str, Any]:
    answer = call_tool(cell.url, "report", {"arguments": {}}, headers=BEARER)
    return answer["result"]["structuredContent"]


# -- the rows: one check per option, each run in every column -----------------------------


def check_bearer_auth(cell: Cell) -> None:
    refused = _initialize(cell)
    assert refused.status_code == 401, refused.text
    assert refused.headers["www-authenticate"].startswith('Bearer resource_metadata="http://')
    wrong = _initialize(cell, authorization="Bearer forged")
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert _initialize(cell, **BEARER).status_code == 200
    assert _report(cell)["subject"] == "alice"


def check_protected_resource_metadata(cell: Cell) -> None:
    document = httpx2.get(f"{cell.base}/.well-known/oauth-protected-resource", timeout=30)
    assert document.status_code == 200
    assert document.json()["authorization_servers"] == ["https://auth.matrix.test"]
    assert document.json()["resource"] == cell.url


def check_custom_routes(cell: Cell) -> None:
    health = httpx2.get(f"{cell.base}/healthz", timeout=30)
    assert (health.status_code, health.text) == (200, "ok")


def check_debug(cell: Cell) -> None:
    crashed = httpx2.get(f"{cell.base}/crash", timeout=30)
    assert crashed.status_code == 500
    assert "the route crashed on purpose" in crashed.text, "debug=True shows the traceback"


def check_middleware(cell: Cell) -> None:
    assert _report(cell)["middleware"] is True


def check_telemetry(cell: Cell) -> None:
    assert _report(cell)["span"] == "tools/call report"


def check_lifespan(cell: Cell) -> None:
    assert _report(cell)["lifespan"] == "entered"


def check_request_state(cell: Cell) -> None:
    first = call_tool(cell.url, "pay", {"arguments": {"amount": 3}}, headers=BEARER)["result"]
    (key,) = first["inputRequests"]
    final = {
        "arguments": {"amount": 3},
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    assert call_tool(cell.url, "pay", final, headers=BEARER)["result"]["content"][0]["text"] == "paid 3"
    replay = call_tool(cell.url, "pay", final, headers=BEARER)
    assert replay["error"]["code"] == -32602, "a round is accepted once"


def check_path(cell: Cell) -> None:
    other = "/mcp" if cell.path == "/rpc" else "/rpc"
    assert (
        httpx2.post(cell.base + other, content=INITIALIZE, headers={**POST_HEADERS, **BEARER}).status_code
        == 404
    )
    assert _initialize(cell, **BEARER).status_code == 200


def check_allowed_hosts(cell: Cell) -> None:
    assert _initialize(cell, host="evil.example", **BEARER).status_code == 421
    allowed = "mcp.test" if cell.column.takes_options else "localhost"
    assert _initialize(cell, host=allowed, **BEARER).status_code == 200


def check_allowed_origins(cell: Cell) -> None:
    assert _initialize(cell, origin="https://evil.example", **BEARER).status_code == 403
    if cell.column.takes_options:
        assert _initialize(cell, origin="https://app.test", **BEARER).status_code == 200


def check_session_id_prefix(cell: Cell) -> None:
    session_id = _initialize(cell, **BEARER).headers["mcp-session-id"]
    prefix = "cell-" if cell.column.takes_options else ""
    assert session_id.startswith(prefix)
    assert len(session_id) > len(prefix)


ROWS: dict[str, Callable[[Cell], None]] = {
    # ServingOptions: what the server object carries for its transports
    "token_verifier": check_bearer_auth,
    "auth": check_protected_resource_metadata,
    "routes": check_custom_routes,
    "debug": check_debug,
    # MCP-layer features the server object carries, which every transport must keep
    "middleware": check_middleware,
    "telemetry": check_telemetry,
    "lifespan": check_lifespan,
    "request_state": check_request_state,
    # entry-point keywords (build_http_app's), given as keywords or as `mcpdi run` flags
    "path": check_path,
    "allowed_hosts": check_allowed_hosts,
    "allowed_origins": check_allowed_origins,
    "session_id_prefix": check_session_id_prefix,
}

CHECKED_ELSEWHERE = {
    # option: where its effect is asserted (one entry point suffices: it is a keyword of one function)
    "json_response": "tests/transport/test_transport_http_legacy.py",
    "stateless": "tests/transport/test_transport_http_legacy.py",
    "host": "tests/transport/test_transport_http_security.py (the bound address is allowed)",
    "dns_rebinding_protection": "tests/transport/test_transport_http_security.py",
    "max_body_size": "tests/transport/test_transport_http_security.py",
    "body_timeout": "tests/transport/test_transport_slow_peers.py",
    "sse_retry_ms": "tests/transport/test_transport_http_legacy.py",
    "max_sessions": "tests/transport/test_transport_session_limits.py",
    "session_idle_timeout": "tests/transport/test_transport_session_limits.py",
    "max_sessions_per_peer": "tests/transport/test_transport_session_limits.py",
    "client_request_timeout": "tests/transport/test_transport_http_legacy.py",
    "max_buffered_bytes": "tests/transport/test_transport_http_legacy.py",
    "max_buffered_bytes_total": "tests/transport/test_transport_memory_budget.py",
    "max_pending_client_requests": "tests/transport/test_transport_memory_budget.py",
    "sessions": "tests/scale/test_shared_sessions.py (and the --shared-sessions column here)",
    "log_level": "tests/transport/test_transport_cli.py",
    "shutdown_grace": "tests/transport/test_transport_shutdown.py",
    "limit_concurrency": "tests/transport/test_transport_slow_peers.py",
    "timeout_keep_alive": "tests/transport/test_transport_slow_peers.py",
    "header_timeout": "tests/transport/test_transport_slow_peers.py",
    "http": "tests/transport/test_transport_event_loop.py",
}


def _keywords(function: Callable[..., Any]) -> set[str]:
    return {
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def test_every_option_has_a_row() -> None:
    carried = {field.name for field in dataclasses.fields(ServingOptions)}
    keywords = _keywords(build_http_app) | _keywords(serve_http) - {"sock", "task_status"}
    missing = sorted((carried | keywords) - ROWS.keys() - CHECKED_ELSEWHERE.keys())
    assert not missing, f"options without a row in the matrix: {missing}"
    assert not (ROWS.keys() & CHECKED_ELSEWHERE.keys())


@pytest.mark.parametrize("row", ROWS, ids=list(ROWS))
def test_the_option_holds_through_the_entry_point(cell: Cell, row: str) -> None:
    ROWS[row](cell)
