"""`RunOptions.from_args`: every combination of `mcpdi run` options checked in one place."""

from __future__ import annotations

import pytest

from mcpdi_transport._cli import _parser  # pyright: ignore[reportPrivateUsage]
from mcpdi_transport._run_options import RunOptions
from mcpdi_transport._workers import ConfigurationError

REDIS = ["--redis", "redis://127.0.0.1:6379/0"]


def options(*argv: str) -> RunOptions:
    return RunOptions.from_args(_parser().parse_args(["run", "server.py", *argv]))


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--reload"], "--reload needs --transport http: on stdio a restart would cut the client's stream"),
        (
            ["--workers", "2", *REDIS],
            "--workers needs --transport http: a stdio server has one client, on one pipe",
        ),
        (
            ["--transport", "http", "--workers", "2", "--reload", *REDIS],
            "--workers and --reload do not go together; reload with one process while developing",
        ),
        (
            ["--transport", "http", "--workers", "2"],
            "several workers need a shared requestState replay store, or a confirmed round could be "
            "replayed once on each of them: add --redis redis://127.0.0.1:6379/0",
        ),
        (
            ["--shared-sessions", *REDIS],
            "--shared-sessions needs --transport http: a stdio server has one client, on one pipe",
        ),
        (
            ["--transport", "http", "--shared-sessions"],
            "--shared-sessions keeps the sessions in Redis: add --redis redis://127.0.0.1:6379/0",
        ),
    ],
)
def test_a_combination_that_cannot_work_is_refused_with_what_to_do(argv: list[str], problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        options(*argv)
    assert str(refused.value) == problem


def test_streamable_http_is_http_for_every_check_and_the_flags_become_serve_http_keywords() -> None:
    chosen = options(
        "--transport", "streamable-http", "--shared-sessions", *REDIS,
        "--path", "/rpc", "--allow-host", "mcp.test:*", "--session-prefix", "eu1-", "--grace", "3",
    )  # fmt: skip
    assert chosen.transport == "http"
    assert chosen.serve_http_keywords() == {
        "log_level": "info",
        "path": "/rpc",
        "shutdown_grace": 3.0,
        "client_request_timeout": 120.0,
        "allowed_hosts": ["mcp.test:*"],
        "allowed_origins": None,
        "limit_concurrency": 1000,
        "session_id_prefix": "eu1-",
        "http": "auto",
    }
