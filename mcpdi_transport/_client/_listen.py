"""`client.listen(...)`: one `subscriptions/listen` stream as an async iterator of change events.

Entering sends the request and waits for the server's acknowledgement; iterating yields
`ToolsListChanged`, `PromptsListChanged`, `ResourcesListChanged` and `ResourceUpdated(uri)`
(each pending event once: they are level triggers); the loop ends when the server ends the
stream with its result, and raises `SubscriptionLost` when the stream drops. Leaving the
block ends the subscription (the request is abandoned, which the server takes as the end).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpdi.lowlevel import (
    INTERNAL_ERROR,
    MCPError,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
    event_matches,
)
from mcpdi_transport._client._channel import ConnectionLost

if TYPE_CHECKING:
    from mcpdi_transport._client._session import ClientSession

__all__ = ("ListenNotSupportedError", "Subscription", "SubscriptionLost", "listen")

_MAX_PENDING_EVENTS: Final = 1024
_listen_ids = itertools.count(1)
_LIST_CHANGED: Final[Mapping[str, ServerEvent]] = {
    "notifications/tools/list_changed": ToolsListChanged(),
    "notifications/prompts/list_changed": PromptsListChanged(),
    "notifications/resources/list_changed": ResourcesListChanged(),
}

_End = Literal["graceful", "lost", "local"]


class ListenNotSupportedError(RuntimeError):
    """`subscriptions/listen` needs a 2026-07-28 connection (the official SDK's words)."""

    def __init__(self, negotiated_version: str | None) -> None:
        self.negotiated_version = negotiated_version
        super().__init__(
            f"subscriptions/listen is not available at protocol version {negotiated_version!r}; it requires "
            "2026-07-28. On earlier versions use subscribe_resource() and the change notifications delivered "
            "through message_handler."
        )


class SubscriptionLost(RuntimeError):
    """The stream ended without the server's graceful close; listen again and refetch."""


class _Route:
    """The frames of one listen stream, in the order they arrived."""

    def __init__(self) -> None:
        self.honoured: types.SubscriptionFilter | None = None
        self.acknowledged = anyio.Event()
        self.end: _End | None = None
        self.error: BaseException | None = None
        self.pending: dict[ServerEvent, None] = {}
        self.wake = anyio.Event()

    def take(self, method: str, params: Mapping[str, Any] | None) -> None:
        if method == "notifications/subscriptions/acknowledged":
            if self.honoured is None:
                try:
                    filter_ = types.SubscriptionFilter.model_validate(
                        (params or {}).get("notifications") or {}
                    )
                except ValidationError:
                    filter_ = types.SubscriptionFilter()
                self.honoured = filter_
                self.acknowledged.set()
            return
        event = _event(method, params)
        if event is None or self.end is not None or self.honoured is None:
            return
        if not event_matches(self.honoured, event) or event in self.pending:
            return
        if len(self.pending) >= _MAX_PENDING_EVENTS:
            msg = (
                f"subscription backlog exceeded {_MAX_PENDING_EVENTS} unread events; listen again and refetch"
            )
            self.settle("lost", MCPError(INTERNAL_ERROR, msg))
            return
        self.pending[event] = None
        self.wake.set()

    def settle(self, end: _End, error: BaseException | None = None) -> None:
        if self.end is None:
            self.end, self.error = end, error
            self.acknowledged.set()
            self.wake.set()


def _event(method: str, params: Mapping[str, Any] | None) -> ServerEvent | None:
    if (event := _LIST_CHANGED.get(method)) is not None:
        return event
    uri = (params or {}).get("uri")
    if method == "notifications/resources/updated" and isinstance(uri, str):
        return ResourceUpdated(uri)
    return None


class Subscription:
    """One open listen stream: `async for event in subscription`; `honored` is what the server
    agreed to send, `subscription_id` the listen request's id stamped on every frame."""

    def __init__(self, route: _Route, subscription_id: str, honored: types.SubscriptionFilter) -> None:
        self._route = route
        self.subscription_id = subscription_id
        self.honored = honored

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> ServerEvent:
        route = self._route
        while True:
            wake = route.wake
            if route.end == "local":
                raise StopAsyncIteration
            if route.pending:
                event = next(iter(route.pending))
                del route.pending[event]
                return event
            if route.end == "lost":
                msg = (
                    f"subscription {self.subscription_id!r} ended without the server's graceful close; "
                    "listen again and refetch"
                )
                raise SubscriptionLost(msg) from route.error
            if route.end == "graceful":
                raise StopAsyncIteration
            await wake.wait()
            route.wake = anyio.Event()


@asynccontextmanager
async def listen(
    session: ClientSession,
    *,
    tools_list_changed: bool = False,
    prompts_list_changed: bool = False,
    resources_list_changed: bool = False,
    resource_subscriptions: Sequence[str] = (),
) -> AsyncGenerator[Subscription]:
    """Open one listen stream on `session`; see the module's docstring."""
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        raise ListenNotSupportedError(session.protocol_version)
    if isinstance(resource_subscriptions, str):
        msg = "resource_subscriptions takes a sequence of URIs, not a bare string"
        raise TypeError(msg)
    wanted = types.SubscriptionFilter(
        tools_list_changed=tools_list_changed or None,
        prompts_list_changed=prompts_list_changed or None,
        resources_list_changed=resources_list_changed or None,
        resource_subscriptions=list(resource_subscriptions) or None,
    )
    params = types.SubscriptionsListenRequestParams(notifications=wanted)
    wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    subscription_id = f"listen-{next(_listen_ids)}"
    route = _Route()

    async def drive() -> None:
        try:
            await session.send("subscriptions/listen", wire, request_id=subscription_id)
        except (MCPError, ConnectionLost) as error:
            route.settle("lost", error)
            return
        route.honoured = route.honoured or types.SubscriptionFilter()  # a result first: closed at once
        route.settle("graceful")

    session.listen_routes[subscription_id] = route.take  # before sending: the ack cannot race it
    waiting = anyio.CancelScope()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(drive)
            with anyio.move_on_after(session.read_timeout) as waiting:
                await route.acknowledged.wait()
            if route.honoured is not None:
                try:
                    yield Subscription(route, subscription_id, route.honoured)
                finally:
                    route.settle("local")
            group.cancel_scope.cancel()
    finally:
        session.listen_routes.pop(subscription_id, None)
    if waiting.cancelled_caught:
        msg = f"subscriptions/listen was not acknowledged within {session.read_timeout} s"
        raise TimeoutError(msg)
    if route.honoured is None:
        if isinstance(route.error, MCPError):
            raise route.error
        msg = f"subscription {subscription_id!r} ended before it was acknowledged"
        raise SubscriptionLost(msg) from route.error
