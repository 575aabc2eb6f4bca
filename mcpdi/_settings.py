"""`MCPServer.settings`: the constructor's options as the official SDK exposes them (`mcp.settings.debug`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpdi._auth import AuthSettings

__all__ = ("LogLevelName", "Settings")

LogLevelName = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


@dataclass(frozen=True, slots=True)
class Settings:
    """What the server was built with; read-only (build a new `MCPServer` to change it).

    `log_level` is the one given, or `"INFO"` (the SDK's default) when none was.
    """

    debug: bool
    log_level: LogLevelName
    warn_on_duplicate_resources: bool
    warn_on_duplicate_tools: bool
    warn_on_duplicate_prompts: bool
    dependencies: list[str] = field(default_factory=list[str])
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None
    auth: AuthSettings | None = None
