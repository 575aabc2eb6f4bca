"""What `MCPServer(subscriptions=...)` serves: the bus `ctx.notify_*` publish on, and who hears it.

At 2026-07-28 the bus feeds `subscriptions/listen` streams. In the handshake era a client
asks for a resource's updates with `resources/subscribe`; the server then tells it, outside
any request, when `ctx.notify_resource_updated(uri)` names that URI, on the connection's
own channel (the GET stream over HTTP, stdout on stdio) and to no other client.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

import mcp_types as types

from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError
from mcpdi.lowlevel._subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    SubscriptionBus,
    event_notification,
)

if TYPE_CHECKING:
    from mcpdi._registry import Registry
    from mcpdi.lowlevel._connection import Connection
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Subscriptions",)

logger = logging.getLogger("mcpdi")


class Subscriptions:
    """One server's bus, its listen handler (None with `subscriptions=False`), and the
    handshake-era `resources/subscribe` subscribers, held weakly: a client that is gone
    (its connection dropped) leaves nothing behind."""

    __slots__ = ("_registry", "_subscribers", "bus", "listen")

    def __init__(self, subscriptions: object | None, registry: Registry) -> None:
        if subscriptions is None or subscriptions is False:
            bus: SubscriptionBus = InMemorySubscriptionBus()
        elif callable(getattr(subscriptions, "publish", None)) and callable(
            getattr(subscriptions, "subscribe", None)
        ):
            bus = subscriptions  # pyright: ignore[reportAssignmentType]
        else:
            msg = (
                "MCPServer(subscriptions=...) takes a subscription bus (with async publish(event) and "
                f"subscribe(listener)), or False to serve no subscriptions/listen; got {subscriptions!r}"
            )
            raise TypeError(msg)
        self.bus = bus
        self.listen = None if subscriptions is False else ListenHandler(bus)
        self._registry = registry
        self._subscribers: weakref.WeakKeyDictionary[Connection, set[str]] = weakref.WeakKeyDictionary()

    def subscriber_count(self, uri: str) -> int:
        """How many connections hold a `resources/subscribe` to `uri`."""
        return sum(uri in uris for uris in self._subscribers.values())

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        if not self._serves(uri):
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
        if ctx.connection.standalone is None:
            msg = (
                f"Cannot subscribe to {uri}: this connection has no channel for notifications outside "
                "a request (a session-less HTTP endpoint); use subscriptions/listen at 2026-07-28"
            )
            raise MCPError(INVALID_PARAMS, msg, {"uri": uri})
        self._subscribers.setdefault(ctx.connection, set()).add(uri)
        return types.EmptyResult()

    def _serves(self, uri: str) -> bool:
        """Whether `resources/read` of `uri` would find a resource (path tricks find none)."""
        for resource in self._registry.resources_in_order():
            raw = resource.match(uri)
            if raw is not None:
                return resource.security.rejected_parameter(raw) is None
        return False

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        uris = self._subscribers.get(ctx.connection)
        if uris is None or uri not in uris:
            raise MCPError(INVALID_PARAMS, f"Not subscribed to {uri}", {"uri": uri})
        uris.discard(uri)
        return types.EmptyResult()

    async def announce_updated(self, uri: str) -> None:
        """Publish `ResourceUpdated(uri)` and tell this process's `resources/subscribe` subscribers."""
        await self.bus.publish(ResourceUpdated(uri))
        wire = event_notification(ResourceUpdated(uri)).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
        for connection, uris in list(self._subscribers.items()):
            standalone = connection.standalone
            if uri not in uris or standalone is None:
                continue
            try:
                await standalone(wire["method"], wire.get("params"))
            except Exception:  # a client that went away must not fail the publisher
                logger.debug(
                    "dropping a resources/subscribe subscriber that cannot be reached", exc_info=True
                )
                self._subscribers.pop(connection, None)
