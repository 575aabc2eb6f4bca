"""`mcpdi graph`: explain the resolver graph of a server file's tools as text, Mermaid or JSON."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpdi_transport._cli._arguments import TARGET_HELP
from mcpdi_transport._target import CommandError, find_server, load_module, split_target

__all__ = ("add_graph", "run_graph")


def add_graph(commands: argparse._SubParsersAction[Any]) -> None:  # pyright: ignore[reportPrivateUsage]
    graph = commands.add_parser("graph", help="explain the resolver graph of each tool, or of one")
    graph.add_argument("target", help=TARGET_HELP)
    graph.add_argument("tool", nargs="?", help="the tool's name (default: every tool)")
    graph.add_argument("--format", choices=("text", "mermaid", "json"), default="text")
    graph.set_defaults(handler=run_graph)


def run_graph(arguments: argparse.Namespace, argv: Sequence[str]) -> None:
    from mcpdi.engine import explanation_json, render_mermaid, render_text

    path, name = split_target(arguments.target)
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
