"""`mcpdi run`: serve a server file on stdio, Streamable HTTP or HTTP+SSE, with its flags beside it."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpdi_transport._cli._arguments import LOG_LEVELS, TARGET_HELP, byte_count, port, positive, seconds
from mcpdi_transport._run_options import RunOptions
from mcpdi_transport._target import CommandError, find_server, load_module, split_target
from mcpdi_transport._workers import KEYS_VARIABLE, ConfigurationError, configure_state, read_key_ring

__all__ = ("add_run", "run")


def add_run(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    run_parser = commands.add_parser("run", help="serve a server object from a Python file")
    add = run_parser.add_argument
    add("target", help=TARGET_HELP)
    add("--transport", choices=("stdio", "http", "streamable-http", "sse"), default="stdio")
    add("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    add("--port", type=port, default=8000, help="HTTP port (default 8000; 0: any free port)")
    add("--path", help="HTTP endpoint path (default /mcp; with --transport sse the event stream's, /sse)")
    add("--log-level", choices=LOG_LEVELS, default="info", help="default info")
    add("--reload", action="store_true", help="restart when a .py file next to the server changes")
    add(
        "--grace",
        type=seconds,
        default=10.0,
        help="seconds running calls may finish at shutdown or when stdin closes (default 10)",
    )
    add(
        "--client-request-timeout",
        type=seconds,
        default=120.0,
        help="seconds a question to the client (elicitation, sampling, roots) waits (default 120)",
    )
    add(
        "--allow-host",
        action="append",
        metavar="HOST[:PORT|:*]",
        help="HTTP: a Host header value to accept (repeatable); keeps DNS-rebinding checks on",
    )
    add(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="HTTP: an Origin to accept, e.g. https://app.example (repeatable)",
    )
    add(
        "--max-connections",
        type=int,
        default=1000,
        help="HTTP: connections served at once; more get 503 (default 1000)",
    )
    _add_limits(run_parser)
    add(
        "--workers",
        type=positive,
        default=1,
        help="HTTP: processes serving the one socket (default 1); more than one needs --redis",
    )
    add(
        "--redis",
        metavar="URL",
        help="keep used requestState ids in this Redis (redis://127.0.0.1:6379/0), shared by all processes",
    )
    add(
        "--shared-sessions",
        action="store_true",
        help="HTTP: keep 2025-11-25 sessions in the --redis Redis too, so any process serves any session",
    )
    add(
        "--state-keys-file",
        type=Path,
        metavar="PATH",
        help=f"requestState key ring, a key a line, the first seals (else ${KEYS_VARIABLE}, comma-separated)",
    )
    add(
        "--session-prefix",
        default="",
        metavar="PREFIX",
        help="HTTP: start every handshake-era session id with PREFIX, for a gateway to pin sessions",
    )
    add(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="HTTP: the event loop; auto (default) is uvloop when installed (mcpdi[fast]), else asyncio",
    )
    add(
        "--http",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="HTTP: the parser; auto (default) is httptools when installed (mcpdi[fast]), else h11",
    )
    add("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker's inherited socket
    run_parser.set_defaults(handler=run)


def _add_limits(run_parser: argparse.ArgumentParser) -> None:
    """The app's limits; left out, each keeps the app's default (the one its help names)."""
    add = run_parser.add_argument
    add(
        "--max-sessions",
        type=positive,
        metavar="N",
        help="HTTP: sessions held at once; at the cap an abandoned one ends for a new one (default 10000)",
    )
    add(
        "--max-sessions-per-peer",
        type=positive,
        metavar="N",
        help="HTTP: sessions one peer holds (a token's principal, else a client address); more get 429 "
        "(default 1000)",
    )
    add(
        "--session-idle-timeout",
        type=seconds,
        metavar="SECONDS",
        help="HTTP: end a session whose client has done nothing this long (default 1800)",
    )
    add(
        "--max-body-size",
        type=byte_count,
        metavar="BYTES",
        help="HTTP: larger request bodies get 413, e.g. 1MiB (default 4MiB)",
    )
    add(
        "--body-timeout",
        type=seconds,
        metavar="SECONDS",
        help="HTTP: a request body that takes longer to arrive gets 408 (default 30)",
    )
    add(
        "--max-buffered-bytes",
        type=byte_count,
        metavar="BYTES",
        help="HTTP: events one session keeps for reading and resuming, oldest dropped first (default 16MiB)",
    )
    add(
        "--max-buffered-bytes-total",
        type=byte_count,
        metavar="BYTES",
        help="HTTP: events all sessions of a process keep together (default 256MiB)",
    )
    add(
        "--max-pending-client-requests",
        type=positive,
        metavar="N",
        help="HTTP: questions to clients that may wait for an answer in a process; past it a call "
        "that asks fails at once (default 10000)",
    )
    add(
        "--header-timeout",
        type=seconds,
        metavar="SECONDS",
        help="HTTP: seconds a client may take to send a request's headers (default 10)",
    )
    add(
        "--keep-alive-timeout",
        type=seconds,
        metavar="SECONDS",
        dest="timeout_keep_alive",
        help="HTTP: seconds an idle keep-alive connection stays open (default 5)",
    )


def _configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")


def run(given: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi_transport._cli import _serving

    _configure_logging(given.log_level)
    try:
        options = RunOptions.from_args(given)
    except ConfigurationError as error:
        raise CommandError(str(error)) from None
    if options.reload:
        _serving.reload(options, argv)
        return
    path, name = split_target(options.target)
    # On stdio, stdout is the protocol stream: what the file prints while importing goes to stderr.
    quiet = (
        contextlib.redirect_stdout(sys.stderr) if options.transport == "stdio" else contextlib.nullcontext()
    )
    try:
        keys = read_key_ring(options.state_keys_file)
        with quiet:
            server = find_server(load_module(path), path, name)
        configure_state(server, keys, options.redis)
    except ConfigurationError as error:
        raise CommandError(str(error)) from None
    if options.workers > 1:
        _serving.supervise(server, options, argv, keys)
    elif options.transport == "stdio":
        _serve_stdio(server, options)
    else:
        _serving.serve_over_http(server, options)


def _serve_stdio(server: Any, options: RunOptions) -> None:
    from mcpdi_transport._serve import run_server
    from mcpdi_transport._serving_options import StdioAuthError

    try:
        run_server(
            server, "stdio", eof_grace=options.grace, client_request_timeout=options.client_request_timeout
        )
    except StdioAuthError as error:
        raise CommandError(str(error)) from None
