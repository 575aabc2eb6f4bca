"""`ctx.session` of a request: the official SDK's `ServerSession` methods, over this request's peer."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types

logger = logging.getLogger("mcpdi")

_CHANGE_METHODS = frozenset(
    {
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
    }
)

if TYPE_CHECKING:
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("RequestSession", "progress_params")


def progress_params(
    token: str | int, progress: float, total: float | None, message: str | None
) -> dict[str, Any]:
    """The params of `notifications/progress` (`total` and `message` only when given)."""
    # Numbers as the schema types them (floats: `1` is sent as `1.0`, as the SDK sends it).
    params: dict[str, Any] = {"progressToken": token, "progress": float(progress)}
    if total is not None:
        params["total"] = float(total)
    if message is not None:
        params["message"] = message
    return params


class RequestSession:
    """What SDK code reaches through `ctx.request_context.session`, for the request being answered.

    Notifications go to the client on this request's stream; `related_request_id` is taken
    for the SDK's signature (they always relate to this request).
    """

    __slots__ = ("_request",)

    def __init__(self, request: ServerRequestContext[Any]) -> None:
        self._request = request

    @property
    def client_params(self) -> types.InitializeRequestParams | None:
        """What the client said of itself, as `initialize` params (at 2026-07-28, built from the
        request's `_meta`, as the SDK builds it); None when it gave no client info or capabilities."""
        info, capabilities = self._request.client_info, self._request.client_capabilities
        version = self._request.protocol_version
        if info is None or capabilities is None or version is None:
            return None
        return types.InitializeRequestParams(
            protocol_version=version, capabilities=capabilities, client_info=info
        )

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared it can do (its handshake, or this request's `_meta`)."""
        return self._request.client_capabilities

    def check_client_capability(self, capability: types.ClientCapabilities) -> bool:
        """Whether the client declared every capability set in `capability`."""
        declared = self._request.client_capabilities
        if declared is None:
            return False
        return all(getattr(declared, name) is not None for name in capability.model_fields_set)

    async def send_notification(
        self,
        notification: types.ServerNotification | Any,
        params: Mapping[str, Any] | None = None,
        related_request_id: types.RequestId | None = None,
    ) -> None:
        """Send a notification: a model (`types.ResourceUpdatedNotification(...)`), or a method and params."""
        if isinstance(notification, str):
            method, params = notification, params
        else:
            wire = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
            method, params = wire["method"], wire.get("params")
        if method in _CHANGE_METHODS:
            await self._send_change(method, params)
        else:
            await self._request.send_notification(method, params)

    async def send_log_message(
        self,
        level: types.LoggingLevel,
        data: Any,
        logger: str | None = None,
        related_request_id: types.RequestId | None = None,
    ) -> None:
        """Log to the client, if it wants messages of this level (as `ctx.log`)."""
        await self._request.log(level, data, logger)

    async def send_progress_notification(
        self,
        progress_token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
        related_request_id: types.RequestId | None = None,
    ) -> None:
        params = progress_params(progress_token, progress, total, message)
        await self._request.send_notification("notifications/progress", params)

    async def send_resource_updated(self, uri: object) -> None:
        await self._send_change("notifications/resources/updated", {"uri": str(uri)})

    async def send_resource_list_changed(self) -> None:
        await self._send_change("notifications/resources/list_changed")

    async def send_tool_list_changed(self) -> None:
        await self._send_change("notifications/tools/list_changed")

    async def send_prompt_list_changed(self) -> None:
        await self._send_change("notifications/prompts/list_changed")

    async def _send_change(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """A change notification: on this request's stream in the handshake era; at 2026-07-28
        dropped, as the SDK drops it, since only `subscriptions/listen` streams may carry one
        (`ctx.notify_*` publish to them)."""
        if self._request.era == "modern":
            logger.debug("dropped %s: at 2026-07-28 it travels on subscriptions/listen streams", method)
            return
        await self._request.send_notification(method, params)

    async def send_ping(self) -> types.EmptyResult:
        """Ping the client (handshake era; `NoBackChannel` at 2026-07-28)."""
        await self._request.send_request("ping")
        return types.EmptyResult()
