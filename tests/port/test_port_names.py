"""Every name a server author imports from the SDK's `mcp.server.mcpserver` is importable from mcpdi."""

from __future__ import annotations

import mcp.server.mcpserver
import mcp.server.mcpserver.exceptions

import mcpdi

# Not ported yet, each with the reason; the test fails when one appears, so this list stays true.
NOT_PORTED = {
    "DEFAULT_RESOURCE_SECURITY": "the template-variable policy has its own names",
    "RequestStateCodec": "mcpdi's codec protocol is `StateCodec` in mcpdi._state._codec",
    "AESGCMRequestStateCodec": "an AEAD codec is a `StateCodec` you plug in",
    "RequestStateBoundary": "sealing is built into MCPServer, not a middleware",
}

SDK_EXCEPTIONS = [
    name
    for name, value in vars(mcp.server.mcpserver.exceptions).items()
    if isinstance(value, type) and issubclass(value, Exception) and not name.startswith("_")
]


def test_the_sdks_author_facing_names_are_importable_from_mcpdi() -> None:
    wanted = {*mcp.server.mcpserver.__all__, *SDK_EXCEPTIONS, "UrlElicitationRequiredError"}
    missing = {name for name in wanted if not hasattr(mcpdi, name)}
    assert missing == set(NOT_PORTED)


def test_the_exception_family_keeps_the_sdks_shape() -> None:
    assert issubclass(mcpdi.UnexpectedToolError, mcpdi.ToolError)
    assert issubclass(mcpdi.ToolError, mcpdi.MCPServerError)
    assert issubclass(mcpdi.ResourceNotFoundError, mcpdi.ResourceError)
    assert issubclass(mcpdi.UnexpectedResourceError, mcpdi.ResourceError)
    assert issubclass(mcpdi.UrlElicitationRequiredError, mcpdi.MCPError)
