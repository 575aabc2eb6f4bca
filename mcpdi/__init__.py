"""mcpdi: MCP tool servers whose parameters are filled by your own functions.

Names load on first use (PEP 562), so `import mcpdi.engine` pays for the engine alone and
`from mcpdi import MCPServer` for the MCP layer alone. `_HOMES` is the one name table.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
    from mcpdi._context import Context as Context
    from mcpdi._errors import ToolError as ToolError
    from mcpdi._replay import MemoryReplayStore as MemoryReplayStore
    from mcpdi._replay import ReplayStore as ReplayStore
    from mcpdi._resource_security import ResourceSecurity as ResourceSecurity
    from mcpdi._server import MCPServer as MCPServer
    from mcpdi._state import RequestStateSecurity as RequestStateSecurity
    from mcpdi._state_aead import AesGcmCodec as AesGcmCodec
    from mcpdi._state_codec import HmacCodec as HmacCodec
    from mcpdi._state_codec import InvalidRequestState as InvalidRequestState
    from mcpdi._state_codec import StateCodec as StateCodec
    from mcpdi.engine import InvalidSignature as InvalidSignature
    from mcpdi.engine import Resolve as Resolve
    from mcpdi.engine import RoundOutcome as RoundOutcome
    from mcpdi.lowlevel import MCPError as MCPError
    from mcpdi.lowlevel import Server as Server
    from mcpdi.lowlevel import ServerRequestContext as ServerRequestContext

_HOMES: dict[str, str] = {
    "AcceptedElicitation": "mcpdi._asking",
    "AesGcmCodec": "mcpdi._state_aead",
    "AskModel": "mcpdi._asking",
    "CancelledElicitation": "mcpdi._asking",
    "Context": "mcpdi._context",
    "DeclinedElicitation": "mcpdi._asking",
    "Default": "mcpdi._asking",
    "Elicit": "mcpdi._asking",
    "ElicitationResult": "mcpdi._asking",
    "Header": "mcpdi._arguments",
    "HmacCodec": "mcpdi._state_codec",
    "InvalidRequestState": "mcpdi._state_codec",
    "InvalidSignature": "mcpdi.engine",
    "ListRoots": "mcpdi._asking",
    "MCPError": "mcpdi.lowlevel",
    "MCPServer": "mcpdi._server",
    "MemoryReplayStore": "mcpdi._replay",
    "ReplayStore": "mcpdi._replay",
    "RequestStateSecurity": "mcpdi._state",
    "Resolve": "mcpdi.engine",
    "ResourceSecurity": "mcpdi._resource_security",
    "RoundOutcome": "mcpdi.engine",
    "Sample": "mcpdi._asking",
    "Server": "mcpdi.lowlevel",
    "ServerRequestContext": "mcpdi.lowlevel",
    "StateCodec": "mcpdi._state_codec",
    "ToolError": "mcpdi._errors",
    "types": "mcpdi.types",
}

__all__ = (
    "AcceptedElicitation",
    "AesGcmCodec",
    "AskModel",
    "CancelledElicitation",
    "Context",
    "DeclinedElicitation",
    "Default",
    "Elicit",
    "ElicitationResult",
    "Header",
    "HmacCodec",
    "InvalidRequestState",
    "InvalidSignature",
    "ListRoots",
    "MCPError",
    "MCPServer",
    "MemoryReplayStore",
    "ReplayStore",
    "RequestStateSecurity",
    "Resolve",
    "ResourceSecurity",
    "RoundOutcome",
    "Sample",
    "Server",
    "ServerRequestContext",
    "StateCodec",
    "ToolError",
    "types",
)


def __getattr__(name: str) -> _typing.Any:
    home = _HOMES.get(name)
    if home is None:
        msg = f"module 'mcpdi' has no attribute {name!r}"
        raise AttributeError(msg)
    module = _importlib.import_module(home)
    value = module if name == "types" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
