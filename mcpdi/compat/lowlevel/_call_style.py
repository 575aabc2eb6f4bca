"""How 1.x called a `list_*` handler: with the whole request when a parameter is typed as it, else bare."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, get_type_hints

__all__ = ("request_caller",)

Caller = Callable[[Any], Awaitable[Any]]


def request_caller(func: Callable[..., Awaitable[Any]], request_type: type[Any]) -> Caller:
    """`caller(request)` calls `func` as 1.x's `create_call_wrapper` did: `func(request)` when a
    parameter without default is annotated `request_type` (positionally, or by its name when it
    is not positional-only), else `func()`. Decided once, at registration."""
    try:
        signature = inspect.signature(func)
        hints = get_type_hints(func)
    except (ValueError, TypeError, NameError):
        return lambda _request: func()
    for parameter in signature.parameters.values():
        if hints.get(parameter.name) != request_type or parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if parameter.default is not inspect.Parameter.empty:
            return lambda _request: func()
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            return lambda request: func(request)
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD:
            name = parameter.name
            return lambda request: func(**{name: request})
    return lambda _request: func()
