"""The `mcpdi` command: `run` a server file on stdio or HTTP, explain its `graph`, `install` it
into an MCP client, and `list` or `call` its tools from a terminal."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpdi_transport._run_options import RunOptions
from mcpdi_transport._target import CommandError, find_server, load_module, load_server, split_target
from mcpdi_transport._workers import (
    KEYS_VARIABLE,
    ConfigurationError,
    configure_state,
    inherited_socket,
    read_key_ring,
    supervise_workers,
)

__all__ = ("CommandError", "find_server", "load_module", "main")

_LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
_split_target = split_target


def _port(text: str) -> int:
    """An argparse type: a TCP port number (0 lets the system pick a free one)."""
    try:
        port = int(text)
    except ValueError:
        msg = f"not a port number: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not 0 <= port <= 65535:
        msg = f"{port} is not a TCP port; use 1-65535 (or 0 for any free port)"
        raise argparse.ArgumentTypeError(msg)
    return port


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"mcpdi {version('mcpdi')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
        return "mcpdi (version unknown)"


def _graph(arguments: argparse.Namespace) -> None:
    from mcpdi.engine import explanation_json, render_mermaid, render_text

    path, name = _split_target(arguments.target)
    server = find_server(load_module(path), path, name)
    explain = getattr(server, "explain", None)
    if explain is None:
        msg = "mcpdi graph needs an MCPServer; a low-level Server has no resolver plans"
        raise CommandError(msg)
    try:
        explanations = explain(arguments.tool)
    except KeyError:
        msg = f"{path} has no tool named {arguments.tool!r}"
        raise CommandError(msg) from None
    if arguments.format == "json":
        print(explanation_json(explanations, server=server.name))
    elif arguments.format == "mermaid":
        print(render_mermaid(explanations))
    else:
        base = str(Path.cwd())
        print("\n\n".join(render_text(e, base=base) for e in explanations) or f"{server.name} has no tools")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpdi", description="Run MCP servers written with mcpdi.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a server object from a Python file")
    run.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    run.add_argument("--transport", choices=("stdio", "http", "streamable-http"), default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    run.add_argument("--port", type=_port, default=8000, help="HTTP port (default 8000; 0: any free port)")
    run.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    run.add_argument("--log-level", choices=_LOG_LEVELS, default="info", help="default info")
    run.add_argument(
        "--reload", action="store_true", help="restart when a .py file next to the server changes"
    )
    run.add_argument(
        "--grace",
        type=_seconds,
        default=10.0,
        help="seconds running calls may finish at shutdown or when stdin closes (default 10)",
    )
    run.add_argument(
        "--client-request-timeout",
        type=_seconds,
        default=120.0,
        help="seconds a question to the client (elicitation, sampling, roots) waits (default 120)",
    )
    run.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST[:PORT|:*]",
        help="HTTP: a Host header value to accept (repeatable); keeps DNS-rebinding checks on",
    )
    run.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="HTTP: an Origin to accept, e.g. https://app.example (repeatable)",
    )
    run.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        help="HTTP: connections served at once; more get 503 (default 1000)",
    )
    run.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help="HTTP: processes serving the one socket (default 1); more than one needs --redis",
    )
    run.add_argument(
        "--redis",
        metavar="URL",
        help="keep used requestState ids in this Redis (redis://127.0.0.1:6379/0), shared by all processes",
    )
    run.add_argument(
        "--shared-sessions",
        action="store_true",
        help="HTTP: keep 2025-11-25 sessions in the --redis Redis too, so any process serves any session",
    )
    run.add_argument(
        "--state-keys-file",
        type=Path,
        metavar="PATH",
        help=f"requestState key ring, a key a line, the first seals (else ${KEYS_VARIABLE}, comma-separated)",
    )
    run.add_argument(
        "--session-prefix",
        default="",
        metavar="PREFIX",
        help="HTTP: start every handshake-era session id with PREFIX, for a gateway to pin sessions",
    )
    run.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="HTTP: the event loop; auto (default) is uvloop when installed (mcpdi[fast]), else asyncio",
    )
    run.add_argument(
        "--http",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="HTTP: the parser; auto (default) is httptools when installed (mcpdi[fast]), else h11",
    )
    run.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker's inherited socket
    graph = commands.add_parser("graph", help="explain the resolver graph of each tool, or of one")
    graph.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    graph.add_argument("tool", nargs="?", help="the tool's name (default: every tool)")
    graph.add_argument("--format", choices=("text", "mermaid", "json"), default="text")
    install = commands.add_parser("install", help="add the server to an MCP client's configuration")
    install.add_argument("client", choices=("claude-desktop", "claude-code", "cursor", "mcp-json"))
    install.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    install.add_argument("--name", help="the entry's name (default: the server's name)")
    install.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment")
    install.add_argument("--config", type=Path, help="write this file instead of the client's own")
    install.add_argument("--print", action="store_true", dest="print_only", help="print, write nothing")
    for command, about in (
        ("list", "list a server's tools"),
        ("call", "call a tool, answering its questions"),
    ):
        client = commands.add_parser(command, help=about)
        client.add_argument("target", help="path/to/server.py[:object] (in memory) or an http(s):// URL")
        if command == "call":
            client.add_argument("tool", help="the tool's name")
            client.add_argument("arguments", nargs="*", metavar="NAME=VALUE", help="a JSON value or text")
            client.add_argument("--json", help="the arguments as one JSON object")
        client.add_argument("--mode", default="auto", help="auto (default), legacy or 2026-07-28")
        client.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="NAME:VALUE",
            help="an HTTP header sent with every request (repeatable); a file target reads it in ctx.headers",
        )
        client.add_argument(
            "--token",
            help="a bearer token: sent as Authorization over HTTP; for a file, checked by its verifier",
        )
    dev = commands.add_parser("dev", help="serve a server file with a page to try it; reload on change")
    dev.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    dev.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks one)")
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        msg = f"expected a number of seconds (0 or more), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")


def _url(host: str, port: int, path: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"expected a whole number of 1 or more, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _supervise(server: Any, arguments: RunOptions, argv: Sequence[str], keys: list[str] | None) -> None:
    from mcpdi_transport._listen import CannotListen, bind_socket

    try:
        sock = bind_socket(arguments.host, arguments.port)
    except CannotListen as error:
        raise CommandError(str(error)) from None
    port = sock.getsockname()[1]
    name = getattr(server, "name", "server")
    url = _url(arguments.host, port, arguments.path)
    print(f"Serving {name} on {url} with {arguments.workers} workers", file=sys.stderr, flush=True)
    child_argv = _without_option(argv, "--workers")
    child_argv = [*_without_option(child_argv, "--port"), "--port", str(port)]
    raise SystemExit(supervise_workers(child_argv, arguments.workers, sock, keys))


def _without_option(argv: Sequence[str], option: str) -> list[str]:
    """`argv` without `option` and its value (either `--opt VALUE` or `--opt=VALUE`)."""
    kept: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
        elif item == option:
            skip = True
        elif not item.startswith(f"{option}="):
            kept.append(item)
    return kept


def _shared_sessions(arguments: RunOptions) -> dict[str, Any]:
    """`sessions=RedisSessions(url)` for `serve_http` with `--shared-sessions`, else nothing."""
    if not arguments.shared_sessions or arguments.redis is None:
        return {}
    from mcpdi_transport._redis_sessions import RedisSessions

    return {"sessions": RedisSessions(arguments.redis)}


def _serve_http(server: Any, arguments: RunOptions) -> None:
    import anyio

    from mcpdi_transport._listen import CannotListen
    from mcpdi_transport._serve import event_loop_options, serve_http

    inherited = {} if arguments.listen_fd is None else {"sock": inherited_socket(arguments.listen_fd)}

    serve = functools.partial(
        serve_http,
        server,
        arguments.host,
        arguments.port,
        **arguments.serve_http_keywords(),
        **inherited,
        **_shared_sessions(arguments),
    )

    async def serve_and_announce() -> None:
        async with anyio.create_task_group() as group:
            port = await group.start(serve)
            if inherited:
                return  # a worker: the supervisor announced the address
            name = getattr(server, "name", "server")
            print(
                f"Serving {name} on {_url(arguments.host, port, arguments.path)}", file=sys.stderr, flush=True
            )

    refused: list[CannotListen] = []
    try:
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn has already shut down cleanly
            anyio.run(serve_and_announce, backend_options=event_loop_options(arguments.loop))  # pyright: ignore[reportArgumentType]
    except* CannotListen as group:
        refused.extend(error for error in group.exceptions if isinstance(error, CannotListen))
    if refused:
        raise CommandError(str(refused[0]))


def _reload(arguments: RunOptions, argv: Sequence[str]) -> None:
    import watchfiles

    path, _ = _split_target(arguments.target)
    if not path.is_file():
        msg = f"no such file: {path}"
        raise CommandError(msg)
    child = [sys.executable, "-m", "mcpdi_transport", *(a for a in argv if a != "--reload")]

    def changed(changes: set[tuple[watchfiles.Change, str]]) -> None:
        names = ", ".join(sorted({Path(name).name for _, name in changes}))
        print(f"Reloading: {names} changed", file=sys.stderr, flush=True)

    watchfiles.run_process(
        path.resolve().parent,
        target=shlex.join(child),
        target_type="command",
        callback=changed,
        watch_filter=watchfiles.PythonFilter(),
    )


def _run(given: argparse.Namespace, argv: Sequence[str]) -> None:
    _configure_logging(given.log_level)
    try:
        arguments = RunOptions.from_args(given)
    except ConfigurationError as error:
        raise CommandError(str(error)) from None
    if arguments.reload:
        _reload(arguments, argv)
        return
    path, name = _split_target(arguments.target)
    # On stdio, stdout is the protocol stream: what the file prints while importing goes to stderr.
    quiet = (
        contextlib.redirect_stdout(sys.stderr) if arguments.transport == "stdio" else contextlib.nullcontext()
    )
    try:
        keys = read_key_ring(arguments.state_keys_file)
        with quiet:
            server = find_server(load_module(path), path, name)
        configure_state(server, keys, arguments.redis)
    except ConfigurationError as error:
        raise CommandError(str(error)) from None
    if arguments.workers > 1:
        _supervise(server, arguments, argv, keys)
        return
    if arguments.transport == "stdio":
        from mcpdi_transport._serve import run_server
        from mcpdi_transport._serving_options import StdioAuthError

        try:
            run_server(
                server,
                "stdio",
                eof_grace=arguments.grace,
                client_request_timeout=arguments.client_request_timeout,
            )
        except StdioAuthError as error:
            raise CommandError(str(error)) from None
        return
    _serve_http(server, arguments)


def _install(arguments: argparse.Namespace) -> None:
    from mcpdi_transport._install import config_path, install, server_entry

    path, object_name = _split_target(arguments.target)
    server, _ = load_server(arguments.target)
    name = arguments.name or getattr(server, "name", None) or path.stem
    entry = server_entry(path, object_name, transport_args=(), env=arguments.env)
    target = arguments.config
    if target is None and arguments.client != "mcp-json":
        target = config_path(arguments.client, home=Path.home(), cwd=Path.cwd())
    if arguments.client == "mcp-json" and arguments.config is None:
        arguments.print_only = True  # a generic entry: print it for the person to place
    text, _ = install(arguments.client, name, entry, path=target, print_only=arguments.print_only)
    print(text)


def _client_command(arguments: argparse.Namespace) -> None:
    from mcpdi_transport import _terminal

    credentials = _terminal.Credentials.parse(arguments.header, arguments.token)
    if arguments.command == "list":
        listing = _terminal.list_tools(
            arguments.target, mode=arguments.mode, out=sys.stdout, credentials=credentials
        )
        _terminal.run_async(listing)
        return
    tool_arguments = _terminal.parse_arguments(arguments.arguments, arguments.json)
    ok = _terminal.run_async(
        _terminal.call_tool(
            arguments.target,
            arguments.tool,
            tool_arguments,
            mode=arguments.mode,
            stdin=sys.stdin,
            out=sys.stdout,
            err=sys.stderr,
            credentials=credentials,
        )
    )
    if not ok:
        raise SystemExit(1)


def _dev(arguments: argparse.Namespace) -> None:
    path, name = _split_target(arguments.target)
    from mcpdi_transport._dev._run import ServerDidNotStart, run_dev
    from mcpdi_transport._listen import CannotListen

    def load() -> Any:
        return find_server(load_module(path), path, name)

    try:
        run_dev(load, path, arguments.port, sys.stdout)
    except CannotListen as error:
        raise CommandError(str(error)) from None
    except ServerDidNotStart as error:
        msg = f"cannot start {path}: {error}"
        raise CommandError(msg) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `mcpdi` command."""
    given = list(sys.argv[1:] if argv is None else argv)
    arguments = _parser().parse_args(given)
    try:
        if arguments.command == "run":
            _run(arguments, given)
        elif arguments.command == "graph":
            _graph(arguments)
        elif arguments.command == "install":
            _install(arguments)
        elif arguments.command == "dev":
            _dev(arguments)
        else:
            _client_command(arguments)
    except CommandError as error:
        print(f"mcpdi: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
