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
    from mcpdi._asking import CancelledElicitation as CancelledElicitation
    from mcpdi._asking import DeclinedElicitation as DeclinedElicitation
    from mcpdi._asking import Elicit as Elicit
    from mcpdi._asking import ElicitationResult as ElicitationResult
    from mcpdi._asking import ListRoots as ListRoots
    from mcpdi._asking import Sample as Sample
    from mcpdi._context import Context as Context
    from mcpdi._errors import ToolError as ToolError
    from mcpdi._server import MCPServer as MCPServer
    from mcpdi._state import RequestStateSecurity as RequestStateSecurity
    from mcpdi.engine import InvalidSignature as InvalidSignature
    from mcpdi.engine import Resolve as Resolve
    from mcpdi.engine import RoundOutcome as RoundOutcome
    from mcpdi.lowlevel import MCPError as MCPError
    from mcpdi.lowlevel import Server as Server
    from mcpdi.lowlevel import ServerRequestContext as ServerRequestContext

_HOMES: dict[str, str] = {
    "AcceptedElicitation": "mcpdi._asking",
    "CancelledElicitation": "mcpdi._asking",
    "Context": "mcpdi._context",
    "DeclinedElicitation": "mcpdi._asking",
    "Elicit": "mcpdi._asking",
    "ElicitationResult": "mcpdi._asking",
    "Header": "mcpdi._arguments",
    "InvalidSignature": "mcpdi.engine",
    "ListRoots": "mcpdi._asking",
    "MCPError": "mcpdi.lowlevel",
    "MCPServer": "mcpdi._server",
    "RequestStateSecurity": "mcpdi._state",
    "Resolve": "mcpdi.engine",
    "RoundOutcome": "mcpdi.engine",
    "Sample": "mcpdi._asking",
    "Server": "mcpdi.lowlevel",
    "ServerRequestContext": "mcpdi.lowlevel",
    "ToolError": "mcpdi._errors",
    "types": "mcpdi.types",
}

__all__ = (
    "AcceptedElicitation",
    "CancelledElicitation",
    "Context",
    "DeclinedElicitation",
    "Elicit",
    "ElicitationResult",
    "Header",
    "InvalidSignature",
    "ListRoots",
    "MCPError",
    "MCPServer",
    "RequestStateSecurity",
    "Resolve",
    "RoundOutcome",
    "Sample",
    "Server",
    "ServerRequestContext",
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
