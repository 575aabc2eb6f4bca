"""One backend behind the gateway: `python gateway_backend.py PORT`.

Its name comes from `BACKEND` (also the prefix of its session ids), the state key ring from
`MCPDI_STATE_KEYS` (comma-separated, first seals), the shared replay store from `REDIS_URL`.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Annotated

import anyio
from pydantic import BaseModel, Field

from mcpdi import Elicit, MCPServer, RequestStateSecurity, Resolve
from mcpdi_transport import RedisReplayStore, serve_http

BACKEND = os.environ["BACKEND"]


class Confirm(BaseModel):
    ok: bool


def confirm_payment(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR?", Confirm)


security = RequestStateSecurity(
    keys=os.environ["MCPDI_STATE_KEYS"].split(","),
    replay_store=RedisReplayStore(os.environ["REDIS_URL"]),
)
mcp = MCPServer("Regions", request_state=security)


@mcp.tool()
def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Say which backend served the region."""
    return f"{region} served by {BACKEND}"


@mcp.tool()
def whoami() -> str:
    """Name the backend that answered."""
    return BACKEND


@mcp.tool()
def pay(amount: int, confirm: Annotated[Confirm, Resolve(confirm_payment)]) -> str:
    """Pay after the person confirmed."""
    return f"paid {amount} on {BACKEND}" if confirm.ok else "not paid"


if __name__ == "__main__":
    serve = functools.partial(serve_http, mcp, "127.0.0.1", int(sys.argv[1]), session_id_prefix=f"{BACKEND}-")
    anyio.run(serve)
