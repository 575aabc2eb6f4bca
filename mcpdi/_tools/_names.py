"""The spec's tool-name rule (SEP-986): a name that breaks it is registered, with the SDK's warning."""

from __future__ import annotations

import logging
import re
from typing import Final

__all__ = ("tool_name_warnings", "warn_on_invalid_tool_name")

_VALID: Final = re.compile(r"[A-Za-z0-9._-]{1,128}")
_ALLOWED_CHAR: Final = re.compile(r"[A-Za-z0-9._-]")
SEP_986_URL: Final = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names"

logger = logging.getLogger("mcpdi")


def tool_name_warnings(name: str) -> list[str]:
    """What is wrong with `name` as a tool name, worded as the official SDK words it; [] when nothing."""
    if not name:
        return ["Tool name cannot be empty"]
    if len(name) > 128:
        return [f"Tool name exceeds maximum length of 128 characters (current: {len(name)})"]
    warnings: list[str] = []
    if " " in name:
        warnings.append("Tool name contains spaces, which may cause parsing issues")
    if "," in name:
        warnings.append("Tool name contains commas, which may cause parsing issues")
    if name.startswith("-") or name.endswith("-"):
        warnings.append(
            "Tool name starts or ends with a dash, which may cause parsing issues in some contexts"
        )
    if name.startswith(".") or name.endswith("."):
        warnings.append(
            "Tool name starts or ends with a dot, which may cause parsing issues in some contexts"
        )
    if not _VALID.fullmatch(name):
        invalid = dict.fromkeys(char for char in name if not _ALLOWED_CHAR.fullmatch(char))
        warnings.append(f"Tool name contains invalid characters: {', '.join(repr(c) for c in invalid)}")
        warnings.append("Allowed characters are: A-Z, a-z, 0-9, underscore (_), dash (-), and dot (.)")
    return warnings


def warn_on_invalid_tool_name(name: str) -> None:
    """Log the SDK's warning lines for a tool name outside the spec's rule; registration goes on."""
    warnings = tool_name_warnings(name)
    if not warnings:
        return
    logger.warning('Tool name validation warning for "%s":', name)
    for warning in warnings:
        logger.warning("  - %s", warning)
    logger.warning("Tool registration will proceed, but this may cause compatibility issues.")
    logger.warning("Consider updating the tool name to conform to the MCP tool naming standard.")
    logger.warning("See SEP-986 (%s) for more details.", SEP_986_URL)
