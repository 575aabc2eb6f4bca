"""mcpdi: MCP tool servers whose parameters are filled by your own functions.

Names load on first use (PEP 562), so `import mcpdi.engine` pays for the engine alone and
`from mcpdi import MCPServer` for the MCP layer alone, their modules imported with the
garbage collector paused (`_collector`). `_HOMES` is the one name table.
"""

from __future__ import annotations

import typing as _typing

from mcpdi._collector import load_name as _load_name

if _typing.TYPE_CHECKING:
    from mcp_types import Icon as Icon

    from mcpdi import types as types
    from mcpdi._arguments import Header as Header
    from mcpdi._asking import AcceptedElicitation as AcceptedElicitation
    from mcpdi._asking import AskModel as AskModel
    from mcpdi._asking import CancelledElicitation as CancelledElicitation
    from mcpdi._asking import DeclinedElicitation as DeclinedElicitation
    from mcpdi._asking import Default as Default
    from mcpdi._asking import Elicit as Elicit
    from mcpdi._asking import ElicitationResult as ElicitationResult
    from mcpdi._asking import ListRoots as ListRoots
    from mcpdi._asking import Sample as Sample
    from mcpdi._auth import AccessToken as AccessToken
    from mcpdi._auth import AuthSettings as AuthSettings
    from mcpdi._auth import TokenVerifier as TokenVerifier
    from mcpdi._auth import authenticated as authenticated
    from mcpdi._auth import get_access_token as get_access_token
    from mcpdi._auth import principal_of as principal_of
    from mcpdi._context import Context as Context
    from mcpdi._errors import MCPServerError as MCPServerError
    from mcpdi._errors import ResourceError as ResourceError
    from mcpdi._errors import ResourceNotFoundError as ResourceNotFoundError
    from mcpdi._errors import ToolError as ToolError
    from mcpdi._errors import UnexpectedResourceError as UnexpectedResourceError
    from mcpdi._errors import UnexpectedToolError as UnexpectedToolError
    from mcpdi._errors import UrlElicitationRequiredError as UrlElicitationRequiredError
    from mcpdi._extensions import Extension as Extension
    from mcpdi._extensions import MethodBinding as MethodBinding
    from mcpdi._extensions import ResourceBinding as ResourceBinding
    from mcpdi._extensions import ToolBinding as ToolBinding
    from mcpdi._extensions import require_client_extension as require_client_extension
    from mcpdi._in_memory._calls import ReadResourceContents as ReadResourceContents
    from mcpdi._messages import AssistantMessage as AssistantMessage
    from mcpdi._messages import Message as Message
    from mcpdi._messages import UserMessage as UserMessage
    from mcpdi._middleware import CallNext as CallNext
    from mcpdi._middleware import Middleware as Middleware
    from mcpdi._middleware import MiddlewareContext as MiddlewareContext
    from mcpdi._middleware import ServerMiddleware as ServerMiddleware
    from mcpdi._output._media import Audio as Audio
    from mcpdi._output._media import Image as Image
    from mcpdi._resources._security import ResourceSecurity as ResourceSecurity
    from mcpdi._resources._uri_template import InvalidUriTemplate as InvalidUriTemplate
    from mcpdi._server import MCPServer as MCPServer
    from mcpdi._state._aead import AesGcmCodec as AesGcmCodec
    from mcpdi._state._codec import HmacCodec as HmacCodec
    from mcpdi._state._codec import InvalidRequestState as InvalidRequestState
    from mcpdi._state._codec import StateCodec as StateCodec
    from mcpdi._state._replay import MemoryReplayStore as MemoryReplayStore
    from mcpdi._state._replay import ReplayStore as ReplayStore
    from mcpdi._state._replay import from_address as from_address
    from mcpdi._state._security import RequestStateSecurity as RequestStateSecurity
    from mcpdi._state._security import authenticated_principal as authenticated_principal
    from mcpdi.engine import InvalidSignature as InvalidSignature
    from mcpdi.engine import Resolve as Resolve
    from mcpdi.engine import RoundOutcome as RoundOutcome
    from mcpdi.lowlevel import InMemorySubscriptionBus as InMemorySubscriptionBus
    from mcpdi.lowlevel import ListenHandler as ListenHandler
    from mcpdi.lowlevel import MCPError as MCPError
    from mcpdi.lowlevel import PromptsListChanged as PromptsListChanged
    from mcpdi.lowlevel import ResourcesListChanged as ResourcesListChanged
    from mcpdi.lowlevel import ResourceUpdated as ResourceUpdated
    from mcpdi.lowlevel import RoundLimitExceeded as RoundLimitExceeded
    from mcpdi.lowlevel import Server as Server
    from mcpdi.lowlevel import ServerEvent as ServerEvent
    from mcpdi.lowlevel import ServerRequestContext as ServerRequestContext
    from mcpdi.lowlevel import SubscriptionBus as SubscriptionBus
    from mcpdi.lowlevel import ToolsListChanged as ToolsListChanged
    from mcpdi.lowlevel._sdk_options import TransportSecuritySettings as TransportSecuritySettings

_HOMES: dict[str, str] = {
    "AcceptedElicitation": "mcpdi._asking",
    "AccessToken": "mcpdi._auth",
    "AesGcmCodec": "mcpdi._state._aead",
    "AskModel": "mcpdi._asking",
    "AssistantMessage": "mcpdi._messages",
    "Audio": "mcpdi._output._media",
    "authenticated": "mcpdi._auth",
    "AuthSettings": "mcpdi._auth",
    "CallNext": "mcpdi._middleware",
    "CancelledElicitation": "mcpdi._asking",
    "Context": "mcpdi._context",
    "DeclinedElicitation": "mcpdi._asking",
    "Default": "mcpdi._asking",
    "Elicit": "mcpdi._asking",
    "ElicitationResult": "mcpdi._asking",
    "from_address": "mcpdi._state._replay",
    "get_access_token": "mcpdi._auth",
    "Header": "mcpdi._arguments",
    "HmacCodec": "mcpdi._state._codec",
    "Icon": "mcp_types",
    "Image": "mcpdi._output._media",
    "InvalidRequestState": "mcpdi._state._codec",
    "InvalidSignature": "mcpdi.engine",
    "InvalidUriTemplate": "mcpdi._resources._uri_template",
    "ListRoots": "mcpdi._asking",
    "MCPError": "mcpdi.lowlevel",
    "MCPServer": "mcpdi._server",
    "MCPServerError": "mcpdi._errors",
    "MemoryReplayStore": "mcpdi._state._replay",
    "Message": "mcpdi._messages",
    "Middleware": "mcpdi._middleware",
    "MiddlewareContext": "mcpdi._middleware",
    "principal_of": "mcpdi._auth",
    "ReadResourceContents": "mcpdi._in_memory._calls",
    "ReplayStore": "mcpdi._state._replay",
    "RequestStateSecurity": "mcpdi._state._security",
    "authenticated_principal": "mcpdi._state._security",
    "Resolve": "mcpdi.engine",
    "ResourceError": "mcpdi._errors",
    "ResourceNotFoundError": "mcpdi._errors",
    "ResourceSecurity": "mcpdi._resources._security",
    "RoundLimitExceeded": "mcpdi.lowlevel",
    "RoundOutcome": "mcpdi.engine",
    "Sample": "mcpdi._asking",
    "Server": "mcpdi.lowlevel",
    "ServerMiddleware": "mcpdi._middleware",
    "ServerRequestContext": "mcpdi.lowlevel",
    "StateCodec": "mcpdi._state._codec",
    "TokenVerifier": "mcpdi._auth",
    "ToolError": "mcpdi._errors",
    "TransportSecuritySettings": "mcpdi.lowlevel._sdk_options",
    "types": "mcpdi.types",
    "UnexpectedResourceError": "mcpdi._errors",
    "UnexpectedToolError": "mcpdi._errors",
    "UrlElicitationRequiredError": "mcpdi._errors",
    "UserMessage": "mcpdi._messages",
    "Extension": "mcpdi._extensions",
    "MethodBinding": "mcpdi._extensions",
    "ResourceBinding": "mcpdi._extensions",
    "ToolBinding": "mcpdi._extensions",
    "require_client_extension": "mcpdi._extensions",
    "InMemorySubscriptionBus": "mcpdi.lowlevel",
    "SubscriptionBus": "mcpdi.lowlevel",
    "ListenHandler": "mcpdi.lowlevel",
    "ToolsListChanged": "mcpdi.lowlevel",
    "PromptsListChanged": "mcpdi.lowlevel",
    "ResourcesListChanged": "mcpdi.lowlevel",
    "ResourceUpdated": "mcpdi.lowlevel",
    "ServerEvent": "mcpdi.lowlevel",
}

__all__ = (
    "AcceptedElicitation",
    "AccessToken",
    "AesGcmCodec",
    "AskModel",
    "AssistantMessage",
    "Audio",
    "AuthSettings",
    "CallNext",
    "CancelledElicitation",
    "Context",
    "DeclinedElicitation",
    "Default",
    "Elicit",
    "ElicitationResult",
    "Extension",
    "Header",
    "HmacCodec",
    "Icon",
    "Image",
    "InMemorySubscriptionBus",
    "InvalidRequestState",
    "InvalidSignature",
    "InvalidUriTemplate",
    "ListRoots",
    "ListenHandler",
    "MCPError",
    "MCPServer",
    "MCPServerError",
    "MemoryReplayStore",
    "Message",
    "MethodBinding",
    "Middleware",
    "MiddlewareContext",
    "PromptsListChanged",
    "ReadResourceContents",
    "ReplayStore",
    "RequestStateSecurity",
    "Resolve",
    "ResourceBinding",
    "ResourceError",
    "ResourceNotFoundError",
    "ResourceSecurity",
    "ResourceUpdated",
    "ResourcesListChanged",
    "RoundLimitExceeded",
    "RoundOutcome",
    "Sample",
    "Server",
    "ServerEvent",
    "ServerMiddleware",
    "ServerRequestContext",
    "StateCodec",
    "SubscriptionBus",
    "TokenVerifier",
    "ToolBinding",
    "ToolError",
    "ToolsListChanged",
    "TransportSecuritySettings",
    "UnexpectedResourceError",
    "UnexpectedToolError",
    "UrlElicitationRequiredError",
    "UserMessage",
    "authenticated",
    "authenticated_principal",
    "from_address",
    "get_access_token",
    "principal_of",
    "require_client_extension",
    "types",
)


def __getattr__(name: str) -> _typing.Any:
    return _load_name(__name__, _HOMES, globals(), name, modules=frozenset({"types"}))


def __dir__() -> list[str]:
    return sorted(__all__)
