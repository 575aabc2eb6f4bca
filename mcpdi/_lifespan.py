"""An `MCPServer`'s lifespan: checked when the server is built, entered when it serves."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcpdi.engine import AppScope, InvalidSignature

if TYPE_CHECKING:
    from mcpdi._state._security import RequestStateSecurity

__all__ = ("check_lifespan", "entered_lifespan")


def _where(fn: Any) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""


def check_lifespan(lifespan: Any) -> None:
    """Refuse, with the fix, a lifespan that cannot be entered with `async with lifespan(server)`."""
    if lifespan is None:
        return
    if not callable(lifespan):
        msg = (
            f"lifespan= takes a function of the server, got {lifespan!r} (of type {type(lifespan).__name__})"
        )
        raise TypeError(msg)
    name = getattr(lifespan, "__qualname__", repr(lifespan))
    wrapped = getattr(lifespan, "__wrapped__", None)
    if inspect.isgeneratorfunction(lifespan):
        fix = "write it as `async def` and decorate it with @contextlib.asynccontextmanager"
    elif wrapped is not None and inspect.isgeneratorfunction(wrapped):
        fix = "replace @contextmanager with @asynccontextmanager and write it as `async def`"
    elif inspect.isasyncgenfunction(lifespan):
        fix = "decorate it with @contextlib.asynccontextmanager"
    else:
        return
    kind = "an async generator" if inspect.isasyncgenfunction(lifespan) else "a sync generator"
    msg = (
        f"lifespan {name}{_where(lifespan)} is {kind}, but the server enters its lifespan with "
        f"`async with lifespan(server) as value`; {fix}."
    )
    raise InvalidSignature(msg, function=lifespan)


@asynccontextmanager
async def entered_lifespan(
    server: Any,
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None,
    app_scope: AppScope,
    request_state: RequestStateSecurity,
    delivering: AbstractAsyncContextManager[None],
) -> AsyncGenerator[Any]:
    """`lifespan(server)` entered (`{}` without one) inside `delivering` (the `resources/subscribe`
    subscribers fed from the bus, so updates raised in the lifespan reach them too); on the way
    out the app-scoped values are cleaned up and the request state's replay store closed,
    whatever the lifespan raised."""
    async with delivering:
        try:
            if lifespan is None:
                yield {}
                return
            async with lifespan(server) as value:
                yield value
        finally:
            try:
                await app_scope.aclose()
            finally:
                await request_state.aclose()  # a shared replay store's connections
