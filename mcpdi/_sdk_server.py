"""`MCPServer(...)` keywords of the official SDK that mcpdi maps or refuses, and its registration objects.

The SDK's `MCPServer` takes ready-made `Tool` and `Resource` objects (`tools=`,
`resources=`) and `Prompt` objects (`add_prompt`); mcpdi registers what they wrap. What
mcpdi does not serve (cache hints, an authorization server of its own) is refused here
with what to use instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mcpdi._server import MCPServer

__all__ = ("add_sdk_objects", "prompt_parts", "refuse_unserved", "tool_parts")

_UNSERVED: Final = {
    "cache_hints": (
        "MCPServer(cache_hints=...) is not served by mcpdi; list results carry no cache hints, "
        "see docs/porting.md"
    ),
    "auth_server_provider": (
        "MCPServer(auth_server_provider=...) is not taken by mcpdi, which serves as a resource server "
        "only: verify the tokens your authorization server issues with token_verifier= "
        "(mcpdi_transport.JwtVerifier for JWTs) and auth=AuthSettings(issuer_url=...)"
    ),
}


def refuse_unserved(**options: Any) -> None:
    """Raise `TypeError` for an SDK option mcpdi does not serve; defaults (None, empty, False) pass."""
    for key, value in options.items():
        if value is not None and value != () and value != [] and value != {}:
            raise TypeError(_UNSERVED[key])


def tool_parts(tool: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The function an SDK `Tool` wraps and the `add_tool` keywords it carries."""
    fn = getattr(tool, "fn", None)
    if not callable(fn):
        msg = f"MCPServer(tools=[...]) takes the SDK's Tool objects (with .fn); got {tool!r}"
        raise TypeError(msg)
    keywords = {key: getattr(tool, key, None) for key in ("name", "title", "description", "annotations")}
    keywords |= {"icons": getattr(tool, "icons", None), "meta": getattr(tool, "meta", None)}
    return fn, keywords


def add_sdk_objects(
    mcp: MCPServer[Any], tools: Sequence[Any] | None, resources: Sequence[Any] | None
) -> None:
    """Register what `MCPServer(tools=[...], resources=[...])` was given, as the SDK does."""
    for tool in tools or ():
        fn, keywords = tool_parts(tool)
        mcp.add_tool(fn, **keywords)
    for resource in resources or ():
        mcp.add_resource(resource)


def prompt_parts(prompt: Any, overrides: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The function an SDK `Prompt` (or a plain function) registers, and the `prompt()` keywords."""
    fn = getattr(prompt, "fn", prompt)
    if not callable(fn):
        msg = f"add_prompt takes a Prompt object (with .fn) or a function; got {prompt!r}"
        raise TypeError(msg)
    keywords = {key: getattr(prompt, key, None) for key in ("name", "title", "description", "icons")}
    if fn is prompt:
        keywords = dict.fromkeys(keywords)
    return fn, {key: overrides.get(key) or value for key, value in keywords.items()}
