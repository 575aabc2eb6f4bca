"""`mcpdi list` and `mcpdi call`: a server's tools from a terminal, in memory or over HTTP."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ("add_call", "add_list", "run_call", "run_list")


def _client_parser(
    commands: argparse._SubParsersAction[Any],  # pyright: ignore[reportPrivateUsage]
    command: str,
    about: str,
) -> argparse.ArgumentParser:
    client = commands.add_parser(command, help=about)
    client.add_argument("target", help="path/to/server.py[:object] (in memory) or an http(s):// URL")
    return client


def _add_connection(client: argparse.ArgumentParser) -> None:
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


def add_list(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    listing = _client_parser(commands, "list", "list a server's tools")
    _add_connection(listing)
    listing.set_defaults(handler=run_list)


def add_call(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    call = _client_parser(commands, "call", "call a tool, answering its questions")
    call.add_argument("tool", help="the tool's name")
    call.add_argument("arguments", nargs="*", metavar="NAME=VALUE", help="a JSON value or text")
    call.add_argument("--json", help="the arguments as one JSON object")
    _add_connection(call)
    call.set_defaults(handler=run_call)


def run_list(arguments: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi_transport import _terminal

    credentials = _terminal.Credentials.parse(arguments.header, arguments.token)
    listing = _terminal.list_tools(
        arguments.target, mode=arguments.mode, out=sys.stdout, credentials=credentials
    )
    _terminal.run_async(listing)


def run_call(arguments: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi_transport import _terminal

    credentials = _terminal.Credentials.parse(arguments.header, arguments.token)
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
