"""`mcpdi install`: add a server file to an MCP client's configuration (or print the entry)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpdi_transport._cli._arguments import TARGET_HELP
from mcpdi_transport._target import load_server, split_target

__all__ = ("add_install", "run_install")


def add_install(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    install = commands.add_parser("install", help="add the server to an MCP client's configuration")
    install.add_argument("client", choices=("claude-desktop", "claude-code", "cursor", "mcp-json"))
    install.add_argument("target", help=TARGET_HELP)
    install.add_argument("--name", help="the entry's name (default: the server's name)")
    install.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment")
    install.add_argument("--config", type=Path, help="write this file instead of the client's own")
    install.add_argument("--print", action="store_true", dest="print_only", help="print, write nothing")
    install.set_defaults(handler=run_install)


def run_install(arguments: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi_transport._install import config_path, install, server_entry

    path, object_name = split_target(arguments.target)
    server, _ = load_server(arguments.target)
    name = arguments.name or getattr(server, "name", None) or path.stem
    entry = server_entry(path, object_name, transport_args=(), env=arguments.env)
    target = arguments.config
    if target is None and arguments.client != "mcp-json":
        target = config_path(arguments.client, home=Path.home(), cwd=Path.cwd())
    print_only = arguments.print_only or (arguments.client == "mcp-json" and arguments.config is None)
    # A generic mcp-json entry without --config is printed for the person to place.
    text, _ = install(arguments.client, name, entry, path=target, print_only=print_only)
    print(text)
