"""What `MCPServer(subscriptions=...)` serves: the bus `ctx.notify_*` publish on, and who hears it.

At 2026-07-28 the bus feeds `subscriptions/listen` streams. In the handshake era a client
asks for a resource's updates with `resources/subscribe`; the server then tells it, outside
any request, when `ctx.notify_resource_updated(uri)` names that URI, on the connection's
own channel (the GET stream over HTTP, stdout on stdio) and to no other client. Those
subscribers are fed from the bus too, while the server runs: a bus shared by several
processes makes them hear the updates raised on every process.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError
from mcpdi.lowlevel._subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
    event_notification,
)

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from mcpdi._registry import Registry
    from mcpdi.lowlevel._connection import Connection
    from mcpdi.lowlevel._context import ServerRequestContext

__all__ = ("Subscriptions",)

logger = logging.getLogger("mcpdi")


MAX_WAITING_UPDATES = 1024
"""How many updates wait for one `resources/subscribe` subscriber before the oldest is dropped."""


class _Subscriber:
    """What one connection subscribed to, and the updates waiting to be sent to it."""

    __slots__ = ("sending", "uris", "waiting")

    def __init__(self) -> None:
        self.uris: set[str] = set()
        self.waiting: deque[str] = deque()
        self.sending = False


class Subscriptions:
    """One server's bus, its listen handler (None with `subscriptions=False`), and the
    handshake-era `resources/subscribe` subscribers, held weakly: a client that is gone
    (its connection dropped) leaves nothing behind.

    While the server runs (`delivering()`, entered with its lifespan) the subscribers hear
    the bus: each update is queued for each connection subscribed to its URI and sent by a
    task of that connection's own, so a slow client delays no other; past
    `MAX_WAITING_UPDATES` waiting for one client the oldest is dropped.
    """

    __slots__ = ("_registry", "_subscribers", "_tasks", "bus", "listen")

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
        self._subscribers: weakref.WeakKeyDictionary[Connection, _Subscriber] = weakref.WeakKeyDictionary()
        self._tasks: TaskGroup | None = None

    def subscriber_count(self, uri: str) -> int:
        """How many connections hold a `resources/subscribe` to `uri`."""
        return sum(uri in subscriber.uris for subscriber in self._subscribers.values())

    @asynccontextmanager
    async def delivering(self) -> AsyncGenerator[None]:
        """Feed the `resources/subscribe` subscribers from the bus until exit, which stops the
        sending (the connections are ending). Entered again while entered, it adds nothing:
        each update still reaches each subscriber once."""
        if self._tasks is not None:
            yield
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            unsubscribe = self.bus.subscribe(self._heard)
            try:
                yield
            except Exception as exc:  # raised below as it is, not wrapped in the task group's group
                failure = exc
            finally:
                self._tasks = None
                try:
                    unsubscribe()
                except Exception:  # a custom bus failing must not fail the shutdown
                    logger.exception("the subscription bus's unsubscribe raised")
                tasks.cancel_scope.cancel()
        if failure is not None:
            raise failure

    def _heard(self, event: ServerEvent) -> None:
        """The bus listener: queue a resource update for every connection subscribed to it."""
        tasks = self._tasks
        if not isinstance(event, ResourceUpdated) or tasks is None:
            return
        for connection, subscriber in list(self._subscribers.items()):
            if event.uri not in subscriber.uris:
                continue
            if len(subscriber.waiting) >= MAX_WAITING_UPDATES:
                logger.warning(
                    "a resources/subscribe subscriber stopped reading; dropping its oldest waiting update"
                )
                subscriber.waiting.popleft()
            subscriber.waiting.append(event.uri)
            if not subscriber.sending:
                subscriber.sending = True
                tasks.start_soon(self._send_waiting, connection, subscriber)

    async def _send_waiting(self, connection: Connection, subscriber: _Subscriber) -> None:
        """Send `connection` its waiting updates in order; one that cannot be reached is dropped."""
        try:
            while subscriber.waiting:
                uri = subscriber.waiting.popleft()
                standalone = connection.standalone
                if uri not in subscriber.uris or standalone is None:
                    continue  # unsubscribed meanwhile
                wire = event_notification(ResourceUpdated(uri)).model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                try:
                    await standalone(wire["method"], wire.get("params"))
                except Exception:  # a client that went away must not fail the others
                    logger.debug(
                        "dropping a resources/subscribe subscriber that cannot be reached", exc_info=True
                    )
                    self._subscribers.pop(connection, None)
                    subscriber.waiting.clear()
        finally:
            subscriber.sending = False

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
        self._subscribers.setdefault(ctx.connection, _Subscriber()).uris.add(uri)
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
        subscriber = self._subscribers.get(ctx.connection)
        if subscriber is None or uri not in subscriber.uris:
            raise MCPError(INVALID_PARAMS, f"Not subscribed to {uri}", {"uri": uri})
        subscriber.uris.discard(uri)
        return types.EmptyResult()

    async def announce_updated(self, uri: str) -> None:
        """Publish `ResourceUpdated(uri)`: the listen streams and, while the server runs, the
        `resources/subscribe` subscribers of every process the bus reaches hear it."""
        await self.bus.publish(ResourceUpdated(uri))
