"""A server for `mcpdi run --workers`: each tool says which process answered."""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import BaseModel

from mcpdi import Elicit, MCPServer, Resolve

mcp = MCPServer("Workers")


class Confirm(BaseModel):
    ok: bool


def confirm(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR?", Confirm)


@mcp.tool()
def pid() -> str:
    """The answering process."""
    return str(os.getpid())


@mcp.tool()
def pay(amount: int, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
    """Pay after the person confirmed."""
    return f"paid {amount} in {os.getpid()}" if sure.ok else "not paid"
