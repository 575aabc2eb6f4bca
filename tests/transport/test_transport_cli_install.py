"""`mcpdi install <client>`: the entry MCP clients read to start the server, written or printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpdi_transport._install import config_path

pytestmark = pytest.mark.slow

SHOP = 'from mcpdi import MCPServer\n\nmcp = MCPServer("Shop")\n'


def mcpdi(*arguments: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
        stdin=subprocess.DEVNULL,
    )


def expected_entry(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "mcpdi_transport", "run", str((tmp_path / "shop.py").resolve())],
        **extra,
    }


def test_claude_desktop_gets_the_entry_in_its_own_config_file(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    done = mcpdi(
        "install", "claude-desktop", "shop.py", "--env", "API_KEY=secret", cwd=tmp_path, home=tmp_path
    )
    written = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Added 'Shop' in {written} (Claude Desktop); restart the client to load it.\n"
    assert json.loads(written.read_text()) == {
        "mcpServers": {"Shop": expected_entry(tmp_path, env={"API_KEY": "secret"})}
    }


def test_installing_keeps_other_servers_and_replaces_its_own_entry(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    config = tmp_path / "cursor.json"
    config.write_text(json.dumps({"mcpServers": {"Other": {"command": "other"}, "Shop": {"command": "old"}}}))
    done = mcpdi("install", "cursor", "shop.py", "--config", str(config), cwd=tmp_path, home=tmp_path)
    assert done.stdout.startswith("Replaced 'Shop' in")
    assert json.loads(config.read_text()) == {
        "mcpServers": {"Other": {"command": "other"}, "Shop": expected_entry(tmp_path)}
    }


def test_claude_code_writes_the_project_file_under_the_chosen_name(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    mcpdi("install", "claude-code", "shop.py:mcp", "--name", "books", cwd=tmp_path, home=tmp_path)
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["books"]
    assert entry["args"][-1] == f"{(tmp_path / 'shop.py').resolve()}:mcp"


def test_print_and_the_generic_client_write_nothing(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    for client in ("mcp-json", "cursor"):
        done = mcpdi("install", client, "shop.py", "--print", cwd=tmp_path, home=tmp_path)
        assert json.loads(done.stdout) == {"mcpServers": {"Shop": expected_entry(tmp_path)}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop.py"]


def test_a_config_file_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    config = tmp_path / "broken.json"
    config.write_text("{not json")
    done = mcpdi("install", "cursor", "shop.py", "--config", str(config), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"mcpdi: {config} is not valid JSON (")
    assert done.stderr.endswith("); fix or move it, then install again\n")
    assert config.read_text() == "{not json"


def test_a_bad_env_pair_and_a_missing_file_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    bad = mcpdi("install", "cursor", "shop.py", "--env", "NOEQUALS", "--print", cwd=tmp_path, home=tmp_path)
    assert bad.stderr == "mcpdi: --env takes KEY=VALUE, got 'NOEQUALS'\n"
    missing = mcpdi("install", "cursor", "gone.py", cwd=tmp_path, home=tmp_path)
    assert missing.stderr == "mcpdi: no such file: gone.py\n"


def test_each_client_reads_its_own_file() -> None:
    home, cwd = Path("/home/ada"), Path("/work/shop")
    assert config_path("claude-desktop", home=home, cwd=cwd, platform="linux") == Path(
        "/home/ada/.config/Claude/claude_desktop_config.json"
    )
    assert config_path("claude-desktop", home=home, cwd=cwd, platform="darwin") == Path(
        "/home/ada/Library/Application Support/Claude/claude_desktop_config.json"
    )
    assert config_path("claude-code", home=home, cwd=cwd) == Path("/work/shop/.mcp.json")
    assert config_path("cursor", home=home, cwd=cwd) == Path("/home/ada/.cursor/mcp.json")


def _odd_config(tmp_path: Path, kind: str) -> Path:
    if kind == "not UTF-8":
        config = tmp_path / "latin.json"
        config.write_bytes(b'{"mcpServers": {"Caf\xe9": {}}}')
    elif kind == "dangling link":
        config = tmp_path / "link.json"
        config.symlink_to(tmp_path / "missing" / "config.json")
    elif kind == "directory":
        config = tmp_path / "folder.json"
        config.mkdir()
    else:
        (tmp_path / "plain").write_text("x")
        config = tmp_path / "plain" / "config.json"
    return config


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("not UTF-8", "{config} is not UTF-8 text; fix or move it, then install again"),
        (
            "dangling link",
            "cannot use {config} as the config file: it is a link to {tmp}/missing/config.json, "
            "which does not exist; pass --config with another path",
        ),
        (
            "directory",
            "cannot use {config} as the config file: it is a directory; pass --config with another path",
        ),
        (
            "below a file",
            "cannot use {config} as the config file: a part of its path is a file, not a directory; "
            "pass --config with another path",
        ),
    ],
    ids=["not-utf8", "dangling-link", "directory", "below-a-file"],
)
def test_an_unusable_config_path_is_one_line_and_left_untouched(
    tmp_path: Path, kind: str, reason: str
) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    config = _odd_config(tmp_path, kind)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    done = mcpdi("install", "cursor", "shop.py", "--config", str(config), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"mcpdi: {reason.format(config=config, tmp=tmp_path)}\n"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    if kind == "not UTF-8":
        assert config.read_bytes() == b'{"mcpServers": {"Caf\xe9": {}}}'
