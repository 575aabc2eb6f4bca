"""The `mcpdi` command: `run` a server file on stdio or HTTP, explain its `graph`, `install` it
into an MCP client, `list` or `call` its tools from a terminal, and try it in `dev`.

Each command lives in its own module, its flags beside the function that reads them
(`add_<command>(commands)` registers the parser and its handler); `main` dispatches on the
handler the parsed command carries.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mcpdi_transport._cli._dev import add_dev
from mcpdi_transport._cli._graph import add_graph
from mcpdi_transport._cli._install import add_install
from mcpdi_transport._cli._run import add_run
from mcpdi_transport._cli._terminal import add_call, add_list
from mcpdi_transport._target import CommandError, find_server, load_module

__all__ = ("CommandError", "find_server", "load_module", "main")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"mcpdi {version('mcpdi')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
        return "mcpdi (version unknown)"


class _PrintVersion(argparse.Action):
    """`--version`, which looks the version up only when asked: a start need not scan the metadata."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(_version())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpdi", description="Run MCP servers written with mcpdi.")
    parser.add_argument("--version", action=_PrintVersion)
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (add_run, add_graph, add_install, add_list, add_call, add_dev):
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `mcpdi` command."""
    given = list(sys.argv[1:] if argv is None else argv)
    arguments = _parser().parse_args(given)
    try:
        arguments.handler(arguments, given)
    except CommandError as error:
        print(f"mcpdi: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
