"""`create_initialization_options()`: what a server announces in `initialize`, as the SDK returns it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types

__all__ = ("InitializationOptions",)


@dataclass(frozen=True, slots=True)
class InitializationOptions:
    """The server's identity and capabilities as the official SDK's `InitializationOptions` has them.

    mcpdi's transports compute these themselves; the record is for code that reads them
    (`server.create_initialization_options().capabilities.tools`).
    """

    server_name: str
    server_version: str
    capabilities: types.ServerCapabilities
    title: str | None = None
    description: str | None = None
    instructions: str | None = None
    website_url: str | None = None
    icons: list[types.Icon] | None = None


def initialization_options(
    server: Any,
    experimental_capabilities: dict[str, dict[str, Any]] | None,
    extensions: dict[str, dict[str, Any]] | None = None,
) -> InitializationOptions:
    capabilities: types.ServerCapabilities = server.capabilities()
    if experimental_capabilities:
        capabilities = capabilities.model_copy(update={"experimental": experimental_capabilities})
    if extensions is not None:
        capabilities = capabilities.model_copy(update={"extensions": extensions or None})
    return InitializationOptions(
        server_name=server.name,
        server_version=server.version,
        capabilities=capabilities,
        title=server.title,
        description=server.description,
        instructions=server.instructions,
        website_url=server.website_url,
        icons=server.icons,
    )
