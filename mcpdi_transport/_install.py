"""`mcpdi install <client>`: the JSON entry MCP clients read to start a server, printed or written.

Every client named here reads `{"mcpServers": {name: {"command", "args", "env"}}}`; they
differ in where the file lives. The entry starts this very Python with `-m mcpdi_transport
run <absolute path>`, so the client needs no activated virtual environment.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from mcpdi_transport._target import CommandError

__all__ = ("CLIENTS", "config_path", "install", "server_entry")


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Where one MCP client keeps its server list."""

    name: str
    title: str
    scope: str  # "user": one file per person; "project": a file in the working directory


CLIENTS: Mapping[str, ClientConfig] = {
    "claude-desktop": ClientConfig("claude-desktop", "Claude Desktop", "user"),
    "claude-code": ClientConfig("claude-code", "Claude Code", "project"),
    "cursor": ClientConfig("cursor", "Cursor", "user"),
    "mcp-json": ClientConfig("mcp-json", "a generic mcp.json", "project"),
}


def config_path(client: str, *, home: Path, cwd: Path, platform: str = sys.platform) -> Path:
    """The file `client` reads its MCP servers from."""
    if client == "claude-desktop":
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if platform.startswith("win"):
            appdata = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
            return appdata / "Claude" / "claude_desktop_config.json"
        return home / ".config" / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return cwd / ".mcp.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    return cwd / "mcp.json"


def _environment(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            msg = f"--env takes KEY=VALUE, got {pair!r}"
            raise CommandError(msg)
        env[key] = value
    return env


def server_entry(
    target: Path, object_name: str | None, *, transport_args: Sequence[str], env: Sequence[str]
) -> dict[str, Any]:
    """The `mcpServers` entry that starts the server file on stdio."""
    where = str(target.resolve()) + (f":{object_name}" if object_name else "")
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "mcpdi_transport", "run", where, *transport_args],
    }
    environment = _environment(env)
    if environment:
        entry["env"] = environment
    return entry


def _read_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        loaded: Any = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as error:
        msg = f"{path} is not valid JSON ({error}); fix or move it, then install again"
        raise CommandError(msg) from None
    except UnicodeDecodeError:
        msg = f"{path} is not UTF-8 text; fix or move it, then install again"
        raise CommandError(msg) from None
    except OSError as error:
        raise CommandError(_unusable(path, error)) from None
    if not isinstance(loaded, dict) or not isinstance(
        cast("dict[str, Any]", loaded).get("mcpServers", {}), dict
    ):
        msg = f"{path} does not hold a JSON object with an mcpServers object; fix or move it"
        raise CommandError(msg)
    return cast("dict[str, Any]", loaded)


def _unusable(path: Path, error: OSError) -> str:
    """One line for a config path that cannot be read or written (nothing was changed)."""
    if path.is_symlink() and not path.exists():
        reason = f"it is a link to {os.readlink(path)}, which does not exist"
    elif path.is_dir():
        reason = "it is a directory"
    elif isinstance(error, (FileExistsError, NotADirectoryError)):
        reason = "a part of its path is a file, not a directory"
    else:
        reason = error.strerror or type(error).__name__
    return f"cannot use {path} as the config file: {reason}; pass --config with another path"


def install(
    client: str, name: str, entry: Mapping[str, Any], *, path: Path | None, print_only: bool
) -> tuple[str, Path | None]:
    """Print the entry (as a whole `mcpServers` document) or merge it into the client's file.

    Returns the text to show and the file written (None when only printed). Other servers
    in the file are kept; an entry of the same name is replaced.
    """
    document = {"mcpServers": {name: dict(entry)}}
    if print_only or path is None:
        return json.dumps(document, indent=2), None
    config = _read_config(path)
    servers: dict[str, Any] = dict(config.get("mcpServers", {}))
    replaced = name in servers
    servers[name] = dict(entry)
    config["mcpServers"] = servers
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise CommandError(_unusable(path, error)) from None
    verb = "Replaced" if replaced else "Added"
    title = CLIENTS[client].title
    return f"{verb} {name!r} in {path} ({title}); restart the client to load it.", path
