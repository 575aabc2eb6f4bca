"""What the `mcpdi` commands point at: a Python file and the server object in it.

Importing the file runs the author's code; when it fails, the error names the frame that
raised (file, line, the code) and the line of the file that led there.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Final

__all__ = ("CommandError", "find_server", "load_module", "split_target")

_PREFERRED_NAMES: Final = ("mcp", "server", "app")


class CommandError(Exception):
    """A mistake the command reports on stderr (exit status 1), without a traceback."""


def split_target(target: str) -> tuple[Path, str | None]:
    """`path/to/server.py:object` as the path and the object's name (None when not given)."""
    path, colon, name = target.rpartition(":")
    if colon and name.isidentifier() and path:
        return Path(path), name
    return Path(target), None


def _shown(filename: str) -> str:
    """A path relative to the working directory when it lies below it."""
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename


def _code(frame: traceback.FrameSummary) -> str:
    return f": {frame.line.strip()}" if frame.line else ""


def _import_failure(error: BaseException, path: Path) -> str:
    """`cannot import <file> (line N: code): Kind: message`, then where it was raised if elsewhere."""
    if isinstance(error, SyntaxError):
        where = _shown(error.filename or str(path))
        code = f": {error.text.strip()}" if error.text and error.text.strip() else ""
        located = f"{where}:{error.lineno}{code}" if error.lineno else where
        head = f"cannot import {path}"
        if Path(error.filename or path).resolve() == path.resolve():
            return f"{head} (line {error.lineno}{code}): SyntaxError: {error.msg}"
        return f"{head}: SyntaxError: {error.msg}\n  at {located}"
    frames = traceback.extract_tb(error.__traceback__)
    target = path.resolve()
    own = [frame for frame in frames if Path(frame.filename).resolve() == target]
    message = f"{type(error).__name__}: {error}"
    if not own:
        return f"cannot import {path}: {message}"
    entry = own[0]  # the module-level line that started it
    head = f"cannot import {path} (line {entry.lineno}{_code(entry)}): {message}"
    innermost = frames[-1]
    if innermost is entry:
        return head
    where = f"{_shown(innermost.filename)}:{innermost.lineno} in {innermost.name}"
    return f"{head}\n  raised at {where}{_code(innermost)}"


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
        raise CommandError(_import_failure(error, path)) from None
    return module


def _is_server(value: object) -> bool:
    if isinstance(value, type):
        return False
    import mcpdi

    if isinstance(value, mcpdi.MCPServer | mcpdi.Server):
        return True
    return callable(getattr(value, "running", None))


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


def load_server(target: str) -> tuple[Any, Path]:
    """The server object `target` names, and its file."""
    path, name = split_target(target)
    return find_server(load_module(path), path, name), path
