"""A server that needs its client's extensions (SEP-2133), in the reference SDK's spelling.

`com.example/secret` is served only to a client that declared `com.example/guarded`, and tells
it of a `com.example/tick`; the tool `deferred` answers in a result shape of the client
extension `com.example/tickets` (2026-07-28), which the client redeems with the tool `redeem`.
"""

from typing import Any, Literal

from mcp.server.mcpserver import Extension, MCPServer, MethodBinding, require_client_extension
from mcp_types import Notification, RequestParams, Result


class SecretParams(RequestParams):
    pass


class Ticket(Result):
    result_type: Literal["com.example/ticket"] = "com.example/ticket"
    ticket: str


class Guarded(Extension):
    identifier = "com.example/guarded"

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("com.example/secret", SecretParams, self.secret)]

    async def secret(self, ctx: Any, params: SecretParams) -> dict[str, Any]:
        require_client_extension(ctx, self.identifier)
        tick = Notification[dict[str, int], str](method="com.example/tick", params={"n": 1})
        await ctx.session.send_notification(tick, related_request_id=ctx.request_id)
        return {"secret": "42", "seen": ctx.session.client_capabilities.extensions}


class Tickets(Extension):
    identifier = "com.example/tickets"

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        if params.name == "deferred":
            return Ticket(ticket="t-1")
        return await call_next(ctx)


mcp = MCPServer("Guarded", extensions=[Guarded(), Tickets()])


@mcp.tool()
def deferred() -> str:
    return "answered at once"


@mcp.tool()
def redeem(ticket: str) -> str:
    return f"redeemed {ticket}"
