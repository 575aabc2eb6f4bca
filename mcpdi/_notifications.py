"""`ctx.session`: the notifications a tool sends the client, spelled as the reference SDK spells them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_types import ElicitResult

from mcpdi.lowlevel._errors import MISSING_CAPABILITY, MCPError
from mcpdi.lowlevel._request_session import RequestSession

if TYPE_CHECKING:
    from mcp_types import ClientCapabilities, Implementation

    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Session", "elicit_url")


class Session(RequestSession):
    """What one request can send the client beyond its result: notifications, on its stream.

    In the handshake era they reach the client on the request's SSE stream (or stdio);
    with `json_response=True` there is no stream and they are dropped, as logs are. The
    methods are the official SDK's `ServerSession`'s (`RequestSession`).
    """

    __slots__ = ()

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        return self._request.client_capabilities

    @property
    def client_info(self) -> Implementation | None:
        return self._request.client_info

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished, so it may retry what needed it."""
        params = {"elicitationId": elicitation_id}
        await self._request.send_notification("notifications/elicitation/complete", params)


async def elicit_url(
    request: ServerRequestContext[Any], message: str, url: str, elicitation_id: str
) -> ElicitResult:
    """Send a URL-mode `elicitation/create` and return the client's answer (handshake era)."""
    capabilities = request.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None or getattr(elicitation, "url", None) is None:
        msg = (
            "The client did not declare URL-mode elicitation (capabilities.elicitation.url); "
            "raise UrlElicitationRequiredError to hand it the URL in an error instead"
        )
        raise MCPError(MISSING_CAPABILITY, msg, {"requiredCapabilities": {"elicitation": {"url": {}}}})
    params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
    answer = await request.send_request("elicitation/create", params)
    return ElicitResult.model_validate(answer)
