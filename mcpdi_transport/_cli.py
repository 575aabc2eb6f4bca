"""The `mcpdi` command: `mcpdi run path/to/server.py[:object]` on stdio or HTTP, `mcpdi graph`."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Final

__all__ = ("CommandError", "find_server", "load_module", "main", "render_graph")

_PREFERRED_NAMES: Final = ("mcp", "server", "app")


class CommandError(Exception):
    """A mistake the command reports as one line on stderr (exit status 1)."""


def _is_server(value: object) -> bool:
    if isinstance(value, type):
        return False
    try:
        import mcpdi
    except ImportError:  # pragma: no cover - the package ships together
        mcpdi = None
    kinds = tuple(getattr(mcpdi, name) for name in ("MCPServer", "Server") if hasattr(mcpdi, name))
    if kinds and isinstance(value, kinds):
        return True
    return callable(getattr(value, "running", None))


def _split_target(target: str) -> tuple[Path, str | None]:
    path, colon, name = target.rpartition(":")
    if colon and name.isidentifier() and path:
        return Path(path), name
    return Path(target), None


def load_module(path: Path) -> ModuleType:
    """Import a Python file as a module (its directory goes first on `sys.path`)."""
    if not path.is_file():
        msg = f"no such file: {path}"
        raise CommandError(msg)
    name = path.stem if path.stem.isidentifier() else "mcpdi_server"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        msg = f"cannot import {path}: not a Python file"
        raise CommandError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit:
        raise
    except BaseException as error:
        sys.modules.pop(name, None)
        where = _innermost_frame_in(error, path)
        detail = error.msg if isinstance(error, SyntaxError) else str(error)
        msg = f"cannot import {path}{where}: {type(error).__name__}: {detail}"
        raise CommandError(msg) from None
    return module


def _innermost_frame_in(error: BaseException, path: Path) -> str:
    target = path.resolve()
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).resolve() == target
    ]
    lineno = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
    if lineno is None and frames:
        lineno = frames[-1].lineno
    return f" (line {lineno})" if lineno else ""


def find_server(module: ModuleType, path: Path, name: str | None) -> Any:
    """The server object: the one named, else `mcp`, `server` or `app`, else the only one."""
    if name is not None:
        if not hasattr(module, name):
            msg = f"{path} has no object named {name!r}"
            raise CommandError(msg)
        value = getattr(module, name)
        if not _is_server(value):
            msg = f"{path}:{name} is a {type(value).__name__}, not an MCPServer or Server"
            raise CommandError(msg)
        return value
    for preferred in _PREFERRED_NAMES:
        value = getattr(module, preferred, None)
        if value is not None and _is_server(value):
            return value
    found = {
        key: value for key, value in vars(module).items() if not key.startswith("_") and _is_server(value)
    }
    if len(found) == 1:
        return next(iter(found.values()))
    if not found:
        msg = (
            f"no MCPServer or Server object found in {path}; name it mcp, server or app, or pass {path}:NAME"
        )
        raise CommandError(msg)
    names = ", ".join(sorted(found))
    msg = f"several server objects in {path} ({names}); pass {path}:NAME to pick one"
    raise CommandError(msg)


def _describe_binding(binding: Any) -> str:
    if binding.source == "argument":
        return f"argument {binding.argument}"
    if binding.source == "context":
        kind = binding.context_type
        return f"context {getattr(kind, '__name__', kind)}"
    return str(binding.edge.provider.name) if binding.edge is not None else str(binding.source)


def render_graph(plan: Any) -> str:
    """A tool's resolver graph as text: steps in run order, each with where its inputs come from."""
    lines = [f"tool {plan.name} ({plan.location})"]
    lines.append("arguments: " + (", ".join(argument.name for argument in plan.arguments) or "-"))
    for number, step in enumerate(plan.steps, 1):
        kind = "async" if step.is_async else "sync"
        lines.append(f"{number}. {step.name} ({step.location}, {kind})")
        lines.extend(f"     {b.parameter} <- {_describe_binding(b)}" for b in step.bindings)
    lines.append(f"{plan.name}")
    lines.extend(f"     {b.parameter} <- {_describe_binding(b)}" for b in plan.bindings)
    return "\n".join(lines)


def _graph(arguments: argparse.Namespace) -> None:
    path, name = _split_target(arguments.target)
    server = find_server(load_module(path), path, name)
    lookup = getattr(server, "registered_tool", None)
    if lookup is None:
        msg = "mcpdi graph needs an MCPServer; a low-level Server has no resolver plans"
        raise CommandError(msg)
    try:
        tool = lookup(arguments.tool)
    except KeyError:
        msg = f"{path} has no tool named {arguments.tool!r}"
        raise CommandError(msg) from None
    print(render_graph(tool.plan))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpdi", description="Run MCP servers written with mcpdi.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a server object from a Python file")
    run.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    run.add_argument("--transport", choices=("stdio", "http", "streamable-http"), default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    graph = commands.add_parser("graph", help="print a tool's resolver graph")
    graph.add_argument("target", help="path/to/server.py or path/to/server.py:object")
    graph.add_argument("tool", help="the tool's name")
    return parser


def _run(arguments: argparse.Namespace) -> None:
    path, name = _split_target(arguments.target)
    # On stdio, stdout is the protocol stream: what the file prints while importing goes to stderr.
    quiet = (
        contextlib.redirect_stdout(sys.stderr) if arguments.transport == "stdio" else contextlib.nullcontext()
    )
    with quiet:
        server = find_server(load_module(path), path, name)
    from mcpdi_transport._listen import CannotListen
    from mcpdi_transport._serve import run_server

    if arguments.transport == "stdio":
        run_server(server, "stdio")
        return
    try:
        run_server(server, "http", host=arguments.host, port=arguments.port, path=arguments.path)
    except CannotListen as error:
        raise CommandError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `mcpdi` command."""
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "run":
            _run(arguments)
        elif arguments.command == "graph":
            _graph(arguments)
    except CommandError as error:
        print(f"mcpdi: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
