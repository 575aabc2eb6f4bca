"""`ctx.session`: the notifications a tool sends the client, spelled as the reference SDK spells them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_types import ElicitResult, InitializeRequestParams

from mcpdi.lowlevel._errors import MISSING_CAPABILITY, MCPError

if TYPE_CHECKING:
    from mcp_types import ClientCapabilities, Implementation

    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Session", "elicit_url")


class Session:
    """What one request can send the client beyond its result: notifications, on its stream.

    In the handshake era they reach the client on the request's SSE stream (or stdio);
    with `json_response=True` there is no stream and they are dropped, as logs are.
    """

    __slots__ = ("_request",)

    def __init__(self, request: ServerRequestContext[Any]) -> None:
        self._request = request

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        return self._request.client_capabilities

    @property
    def client_info(self) -> Implementation | None:
        return self._request.client_info

    @property
    def client_params(self) -> InitializeRequestParams | None:
        """What the client said of itself, as `initialize` params (at 2026-07-28, built from the
        request's `_meta`, as the SDK builds it); None when it gave no client info or capabilities."""
        info, capabilities = self._request.client_info, self._request.client_capabilities
        version = self._request.protocol_version
        if info is None or capabilities is None or version is None:
            return None
        return InitializeRequestParams(protocol_version=version, capabilities=capabilities, client_info=info)

    async def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._request.send_notification(method, params)

    async def send_tool_list_changed(self) -> None:
        await self._request.send_notification("notifications/tools/list_changed")

    async def send_prompt_list_changed(self) -> None:
        await self._request.send_notification("notifications/prompts/list_changed")

    async def send_resource_list_changed(self) -> None:
        await self._request.send_notification("notifications/resources/list_changed")

    async def send_resource_updated(self, uri: str) -> None:
        await self._request.send_notification("notifications/resources/updated", {"uri": str(uri)})

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished, so it may retry what needed it."""
        params = {"elicitationId": elicitation_id}
        await self._request.send_notification("notifications/elicitation/complete", params)

    async def send_log_message(self, level: str, data: Any, logger: str | None = None) -> None:
        await self._request.log(level, data, logger)

    async def send_progress_notification(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await self._request.report_progress(progress, total, message)


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
