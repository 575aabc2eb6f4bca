"""Change events and their fan-out: the bus handlers publish on, and `subscriptions/listen` streams.

At 2026-07-28 a client hears about changes only on the response stream of a
`subscriptions/listen` request it sent (spec-2026 `basic/patterns/subscriptions`): the
server acknowledges the honoured filter first, then sends every matching event tagged
with the listen request's id, until the client leaves (which cancels the handler) or the
server ends the stream gracefully with a result. The bus carries typed events, never
JSON-RPC, so a bus over an external pub/sub backend fans events out between processes
without knowing the wire.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import anyio
import anyio.lowlevel
import mcp_types as types

from mcpdi.lowlevel._errors import INTERNAL_ERROR, INVALID_REQUEST, MCPError

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = (
    "SUBSCRIPTION_ID_META_KEY",
    "InMemorySubscriptionBus",
    "ListenHandler",
    "PromptsListChanged",
    "ResourceUpdated",
    "ResourcesListChanged",
    "ServerEvent",
    "SubscriptionBus",
    "ToolsListChanged",
    "event_matches",
    "event_notification",
)

logger = logging.getLogger("mcpdi")

SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"
"""The `_meta` key on every frame of a listen stream: the `subscriptions/listen` request's id."""


@dataclass(frozen=True, slots=True)
class ToolsListChanged:
    """The server's tool list changed."""


@dataclass(frozen=True, slots=True)
class PromptsListChanged:
    """The server's prompt list changed."""


@dataclass(frozen=True, slots=True)
class ResourcesListChanged:
    """The server's resource list changed."""


@dataclass(frozen=True, slots=True)
class ResourceUpdated:
    """The resource at `uri` changed and may need to be read again."""

    uri: str


ServerEvent: TypeAlias = ToolsListChanged | PromptsListChanged | ResourcesListChanged | ResourceUpdated
"""What a server publishes for the clients listening."""


class SubscriptionBus(Protocol):
    """Fan-out between publishers (`ctx.notify_*`) and open listen streams.

    `publish` may do I/O (a bus over Redis or NATS forwards the event, and each process's
    bus calls its local listeners when it comes back). `subscribe` registers a listener
    and returns an idempotent unsubscribe; listeners are synchronous and never raise.
    The official SDK's buses have this shape and plug in unchanged.
    """

    async def publish(self, event: ServerEvent) -> None: ...

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]: ...


class InMemorySubscriptionBus:
    """The in-process bus: every listener of this process, in the order they subscribed."""

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        # Keyed by a token of each subscription: the same callable may subscribe twice.
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}

    def __len__(self) -> int:
        """How many listeners are subscribed (a stream that ended is not)."""
        return len(self._listeners)

    async def publish(self, event: ServerEvent) -> None:
        """Deliver `event` to every listener; one that raises is logged and the rest still get it.

        Ends with a checkpoint, so a burst of publishes lets the streams drain in between.
        """
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:  # one listener must not starve the others or fail the publisher
                logger.exception("a subscription listener raised; the others still get the event")
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe


def event_matches(honoured: types.SubscriptionFilter, event: ServerEvent) -> bool:
    """Whether `event` is one a stream acknowledged with `honoured` asked for."""
    if isinstance(event, ToolsListChanged):
        return honoured.tools_list_changed is True
    if isinstance(event, PromptsListChanged):
        return honoured.prompts_list_changed is True
    if isinstance(event, ResourcesListChanged):
        return honoured.resources_list_changed is True
    return event.uri in (honoured.resource_subscriptions or ())


def event_notification(event: ServerEvent, meta: dict[str, Any] | None = None) -> types.ServerNotification:
    """The wire notification announcing `event` (`meta` tags it, on a listen stream)."""
    if isinstance(event, ToolsListChanged):
        return types.ToolListChangedNotification(params=types.NotificationParams(_meta=meta))
    if isinstance(event, PromptsListChanged):
        return types.PromptListChangedNotification(params=types.NotificationParams(_meta=meta))
    if isinstance(event, ResourcesListChanged):
        return types.ResourceListChangedNotification(params=types.NotificationParams(_meta=meta))
    params = types.ResourceUpdatedNotificationParams(uri=event.uri, _meta=meta)
    return types.ResourceUpdatedNotification(params=params)


def _honoured(requested: types.SubscriptionFilter) -> types.SubscriptionFilter:
    """Every kind asked for is honoured (an event may never fire, as for an unknown URI); false
    flags and an empty URI list are left out of the acknowledgement rather than echoed."""
    return types.SubscriptionFilter(
        tools_list_changed=True if requested.tools_list_changed else None,
        prompts_list_changed=True if requested.prompts_list_changed else None,
        resources_list_changed=True if requested.resources_list_changed else None,
        resource_subscriptions=list(requested.resource_subscriptions)
        if requested.resource_subscriptions
        else None,
    )


async def _send(ctx: ServerRequestContext[Any], notification: types.ServerNotification) -> None:
    wire = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
    await ctx.send_notification(wire["method"], wire.get("params"))


class ListenHandler:
    """Serves `subscriptions/listen`: each request is one stream of the events its filter names.

    The acknowledgement is the first frame; every frame carries the request's id under
    `_meta["io.modelcontextprotocol/subscriptionId"]`. A client that leaves cancels the
    handler and its listener is dropped at once. `close()` ends every stream with its
    result (the graceful end). At most `max_subscriptions` streams are open at once
    (`-32603` past it, before the acknowledgement); a stream whose client stopped reading
    is ended once `max_buffered_events` events wait for it (it re-listens and refetches:
    there is no replay).
    """

    def __init__(
        self, bus: SubscriptionBus, *, max_subscriptions: int = 1024, max_buffered_events: int = 1024
    ) -> None:
        self.bus = bus
        self._max_subscriptions = max_subscriptions
        self._max_buffered_events = max_buffered_events
        self._streams: set[MemoryObjectSendStream[ServerEvent]] = set()

    @property
    def open_streams(self) -> int:
        """How many listen streams are being served right now."""
        return len(self._streams)

    async def __call__(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(INVALID_REQUEST, "subscriptions/listen needs a request id")
        if len(self._streams) >= self._max_subscriptions:
            msg = f"Subscription limit reached ({self._max_subscriptions} open listen streams)"
            raise MCPError(INTERNAL_ERROR, msg)
        honoured = _honoured(params.notifications)
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        send, receive = anyio.create_memory_object_stream[ServerEvent](self._max_buffered_events)

        def deliver(event: ServerEvent) -> None:
            if not event_matches(honoured, event):
                return
            try:
                send.send_nowait(event)
            except anyio.ClosedResourceError:
                pass  # closing: the loop below is ending
            except anyio.WouldBlock:
                logger.warning("listen stream %r: its client stopped reading; ending it", subscription_id)
                self._streams.discard(send)
                send.close()

        # Subscribed before the acknowledgement is sent: an event published meanwhile waits
        # in the buffer, and still goes out after the acknowledgement (this task alone writes).
        unsubscribe = self.bus.subscribe(deliver)
        self._streams.add(send)
        try:
            acknowledged = types.SubscriptionsAcknowledgedNotificationParams(
                notifications=honoured, _meta=meta
            )
            await _send(ctx, types.SubscriptionsAcknowledgedNotification(params=acknowledged))
            async for event in receive:
                await _send(ctx, event_notification(event, meta))
        finally:
            try:
                unsubscribe()
            except Exception:  # a custom bus failing must not keep the stream's slot taken
                logger.exception("the subscription bus's unsubscribe raised")
            self._streams.discard(send)
            send.close()
            receive.close()
        return types.SubscriptionsListenResult(_meta=meta)

    def close(self) -> None:
        """End every open stream gracefully: each sends what it holds, then its result."""
        for stream in list(self._streams):
            stream.close()
