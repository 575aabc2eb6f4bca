"""`MCPServer`'s identity (`name`, `title`, `version`, ...), read from the low-level server announcing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_types import Icon

    from mcpdi.lowlevel._server import Server

__all__ = ("Identity",)


class Identity:
    """The identity half of `MCPServer` (which sets `_server`): read-only, as `initialize` announces it."""

    __slots__ = ()

    _server: Server[Any]

    @property
    def name(self) -> str:
        return self._server.name

    @property
    def title(self) -> str | None:
        return self._server.title

    @property
    def description(self) -> str | None:
        return self._server.description

    @property
    def instructions(self) -> str | None:
        return self._server.instructions

    @property
    def website_url(self) -> str | None:
        return self._server.website_url

    @property
    def icons(self) -> list[Icon] | None:
        return self._server.icons

    @property
    def version(self) -> str:
        return self._server.version
