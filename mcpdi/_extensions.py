"""`MCPServer(extensions=[...])`: opt-in bundles of tools, resources, methods and a `tools/call` wrapper.

An extension (SEP-2133) is named by a reverse-DNS identifier and advertised under
`capabilities.extensions[identifier]` with its settings, in both protocol eras. It declares
what it adds and the server registers it; the official SDK's `Extension` objects are taken
as they are, and mcpdi's `Extension` has the same shape for code that imports it from mcpdi.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolRequestParams, ClientCapabilities, MissingRequiredClientCapabilityErrorData
from pydantic import BaseModel

from mcpdi.lowlevel._errors import METHOD_NOT_FOUND, MISSING_CAPABILITY, MCPError
from mcpdi.lowlevel._extension_identifier import validate_extension_identifier

if TYPE_CHECKING:
    from mcpdi._server import MCPServer
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = (
    "Extension",
    "MethodBinding",
    "ResourceBinding",
    "ToolBinding",
    "apply_extensions",
    "require_client_extension",
    "validate_extension_identifier",
)

RequestHandler = Callable[["ServerRequestContext[Any]", Any], Awaitable[Any]]
CallNext = Callable[["ServerRequestContext[Any]"], Awaitable[Any]]


@dataclass(frozen=True)
class ToolBinding:
    """A tool an extension adds: the function, the `_meta` stamped on it, `add_tool` keywords."""

    fn: Callable[..., Any]
    meta: dict[str, Any] | None = None
    kwargs: dict[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True)
class ResourceBinding:
    """A resource object an extension adds (anything `add_resource` takes)."""

    resource: Any


@dataclass(frozen=True)
class MethodBinding:
    """A request method an extension serves (`tasks/get`), never a spec method.

    `protocol_versions`, when set, limits it to those versions: at any other the request is
    `-32601`, as a spec method outside its versions is.
    """

    method: str
    params_type: type[BaseModel]
    handler: RequestHandler
    protocol_versions: frozenset[str] | None = None

    def __post_init__(self) -> None:
        from mcp_types.methods import SPEC_CLIENT_METHODS  # the method tables: only for an extension

        if self.method in SPEC_CLIENT_METHODS:
            msg = (
                f"MethodBinding cannot bind spec method {self.method!r}; extension methods are "
                "additive — use Extension.intercept_tool_call or Server.middleware to wrap core behaviour"
            )
            raise ValueError(msg)
        if self.protocol_versions is not None and not self.protocol_versions:
            msg = (
                f"MethodBinding for {self.method!r} has an empty protocol_versions set, so it could "
                "never be served; use None to admit every version"
            )
            raise ValueError(msg)


class Extension:
    """Base class of an extension: set `identifier`, override what it contributes."""

    identifier: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        identifier = cls.__dict__.get("identifier")
        if identifier is not None:
            validate_extension_identifier(identifier, owner=cls.__name__)

    def settings(self) -> dict[str, Any]:
        """Advertised at `capabilities.extensions[identifier]` (empty: no settings)."""
        return {}

    def tools(self) -> Sequence[ToolBinding]:
        return ()

    def resources(self) -> Sequence[ResourceBinding]:
        return ()

    def methods(self) -> Sequence[MethodBinding]:
        return ()

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any], call_next: CallNext
    ) -> Any:
        """Wrap `tools/call`: return a result without `call_next` to answer it, or observe it."""
        return await call_next(ctx)


def _intercepts(extension: object) -> bool:
    """Whether `extension` overrides `intercept_tool_call` (mcpdi's base or the SDK's passes through)."""
    for klass in type(extension).__mro__:
        if "intercept_tool_call" in klass.__dict__:
            return not (
                klass.__name__ == "Extension" and klass.__module__ in (__name__, "mcp.server.extension")
            )
    return False


def _version_gated(binding: Any) -> RequestHandler:
    versions: frozenset[str] = binding.protocol_versions
    handler: RequestHandler = binding.handler

    async def gated(ctx: ServerRequestContext[Any], params: Any) -> Any:
        if ctx.protocol_version not in versions:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", binding.method)
        return await handler(ctx, params)

    return gated


def _interceptor_chain(extensions: Sequence[Any], handler: RequestHandler) -> RequestHandler:
    async def wrapped(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> Any:
        async def innermost(inner: ServerRequestContext[Any]) -> Any:
            return await handler(inner, params)

        chain: CallNext = innermost
        for extension in reversed(extensions):
            chain = _bind(extension, params, chain)
        return await chain(ctx)

    return wrapped


def _bind(extension: Any, params: CallToolRequestParams, call_next: CallNext) -> CallNext:
    async def call(ctx: ServerRequestContext[Any]) -> Any:
        return await extension.intercept_tool_call(params, ctx, call_next)

    return call


def apply_extensions(mcp: MCPServer[Any], extensions: Sequence[Any]) -> None:
    """Register every extension's contributions on `mcp` and advertise it, as the SDK does."""
    applied: list[Any] = []
    server = mcp.server
    for extension in extensions:
        identifier = getattr(extension, "identifier", None)
        validate_extension_identifier(identifier, owner=type(extension).__name__)
        if any(other.identifier == identifier for other in applied):
            msg = f"Extension {identifier!r} is already registered"
            raise ValueError(msg)
        applied.append(extension)
        for tool in extension.tools():
            mcp.add_tool(tool.fn, meta=tool.meta, **tool.kwargs)
        for resource in extension.resources():
            mcp.add_resource(resource.resource)
        for method in extension.methods():
            if server.handler_for(method.method) is not None:
                msg = (
                    f"Extension {identifier!r} binds method {method.method!r}, which is already "
                    "registered; extension methods are additive and cannot replace another handler"
                )
                raise ValueError(msg)
            handler = method.handler if method.protocol_versions is None else _version_gated(method)
            server.add_request_handler(method.method, method.params_type, handler)
        server.extensions[identifier] = dict(extension.settings())  # pyright: ignore[reportArgumentType]
    intercepting = [extension for extension in applied if _intercepts(extension)]
    if intercepting:
        entry = server.handler_for("tools/call")
        assert entry is not None  # MCPServer always serves tools/call
        server.add_request_handler(
            "tools/call", CallToolRequestParams, _interceptor_chain(applied, entry.handler)
        )


def require_client_extension(ctx: ServerRequestContext[Any], identifier: str) -> None:
    """Raise `-32021` unless the client declared extension `identifier` in its capabilities."""
    declared = ctx.client_capabilities.extensions if ctx.client_capabilities else None
    if declared is None or identifier not in declared:
        msg = f"Client did not declare required extension {identifier!r}"
        required = ClientCapabilities(extensions={identifier: {}})
        data = MissingRequiredClientCapabilityErrorData(required_capabilities=required)
        raise MCPError(
            MISSING_CAPABILITY, msg, data.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
