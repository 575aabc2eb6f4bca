"""`mcpdi dev`: serve a server file on 127.0.0.1 with a page to try it, reloading on change."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from mcpdi_transport._cli._arguments import TARGET_HELP
from mcpdi_transport._target import CommandError, find_server, load_module, split_target

__all__ = ("add_dev", "run_dev_command")


def add_dev(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    dev = commands.add_parser("dev", help="serve a server file with a page to try it; reload on change")
    dev.add_argument("target", help=TARGET_HELP)
    dev.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks one)")
    dev.set_defaults(handler=run_dev_command)


def run_dev_command(arguments: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi_transport._dev._run import ServerDidNotStart, run_dev
    from mcpdi_transport._listen import CannotListen

    path, name = split_target(arguments.target)

    def load() -> Any:
        return find_server(load_module(path), path, name)

    try:
        run_dev(load, path, arguments.port, sys.stdout)
    except CannotListen as error:
        raise CommandError(str(error)) from None
    except ServerDidNotStart as error:
        msg = f"cannot start {path}: {error}"
        raise CommandError(msg) from None
