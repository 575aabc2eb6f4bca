"""`mcpdi list` / `mcpdi call` with `--token` and `--header`, on a file (in memory) and over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "transport"))
from transport_cli_processes import StderrLines, start, stop  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SERVER = str(HERE / "compose_server.py")
GOOD = "matrix-good-token"


def mcpdi(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mcpdi_transport", *arguments]
    return subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=60, input="")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    process = start("run", SERVER, "--transport", "http", "--port", "0", cwd=HERE)
    try:
        line = StderrLines(process).until("Serving Matrix on ")
        yield line.rsplit("Serving Matrix on ", 1)[1].split()[0]
    finally:
        stop(process)


@pytest.mark.parametrize("where", ["file", "http"])
def test_call_with_a_token_runs_as_its_principal(where: str, request: pytest.FixtureRequest) -> None:
    target = SERVER if where == "file" else request.getfixturevalue("url")
    done = mcpdi("call", target, "report", "--token", GOOD)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["subject"] == "alice"


def test_call_on_a_file_with_a_token_its_verifier_refuses_says_so_in_one_line() -> None:
    done = mcpdi("call", SERVER, "report", "--token", "forged")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "mcpdi: the server's token verifier refuses the token given with --token\n"


def test_call_over_http_without_a_token_is_refused_by_the_server(url: str) -> None:
    done = mcpdi("call", url, "report")
    assert done.returncode == 1
    assert done.stderr == (
        f"mcpdi: the server answered with error -32600: HTTP 401 from POST {url}: "
        '{"error":"invalid_request","error_description":"Bearer token required"}\n'
    )


def test_a_scoped_tool_reads_the_headers_sent_with_header(url: str) -> None:
    for target in (SERVER, url):
        done = mcpdi("call", target, "header", "name=x-tenant", "--header", "X-Tenant: acme", "--token", GOOD)
        assert (done.returncode, done.stdout) == (0, "acme\n"), done.stderr


def test_a_scoped_tool_without_a_token_is_refused_in_memory_as_over_http() -> None:
    done = mcpdi("call", SERVER, "header", "name=x-tenant")
    assert done.returncode == 1
    assert done.stderr == (
        "mcpdi: the server answered with error -32003: "
        "Tool 'header' needs the scopes read, which the access token lacks\n"
    )


def test_a_header_without_a_colon_is_refused() -> None:
    done = mcpdi("list", SERVER, "--header", "X-Tenant")
    assert (done.returncode, done.stderr) == (1, "mcpdi: --header takes NAME:VALUE, got 'X-Tenant'\n")


def test_call_shows_the_progress_the_tool_reports() -> None:
    done = mcpdi("call", SERVER, "count", "to=2")
    assert (done.returncode, done.stdout) == (0, "counted to 2\n"), done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("progress")] == [
        "progress 1/2: step 1",
        "progress 2/2: step 2",
    ]


def test_list_over_http_sends_the_token(url: str) -> None:
    done = mcpdi("list", url, "--token", GOOD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "report()  What this call ran with: its principal, the middleware, its span, the lifespan."
    )
