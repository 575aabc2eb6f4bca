"""mcpdi: MCP tool servers whose parameters are filled by your own functions."""

from mcpdi import types as types
from mcpdi._asking import AcceptedElicitation as AcceptedElicitation
from mcpdi._asking import CancelledElicitation as CancelledElicitation
from mcpdi._asking import DeclinedElicitation as DeclinedElicitation
from mcpdi._asking import Elicit as Elicit
from mcpdi._asking import ElicitationResult as ElicitationResult
from mcpdi._asking import ListRoots as ListRoots
from mcpdi._asking import Sample as Sample
from mcpdi._context import Context as Context
from mcpdi._core_context import ServerRequestContext as ServerRequestContext
from mcpdi._errors import MCPError as MCPError
from mcpdi._lowlevel import Server as Server
from mcpdi._schema import Header as Header
from mcpdi._server import MCPServer as MCPServer
from mcpdi._state import RequestStateSecurity as RequestStateSecurity
from mcpdi._tool_error import ToolError as ToolError
from mcpdi.engine import InvalidSignature as InvalidSignature
from mcpdi.engine import Resolve as Resolve

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
    "Sample",
    "Server",
    "ServerRequestContext",
    "ToolError",
    "types",
)
