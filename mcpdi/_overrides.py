"""Overriding a resolver for a while: affected plans recompiled on enter, the originals back on exit.

An override is a registration-time act, as every plan is: the replacement's signature is read
and checked when the override starts, and calls in between run a plan compiled for it, so a
server without overrides pays nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from mcpdi._registration import compile_mcp_plan
from mcpdi.engine import Plan

__all__ = ("ResolverOverrides",)


class _Entry(Protocol):
    """A registered tool, prompt or resource: a frozen record holding its plan."""

    @property
    def plan(self) -> Plan: ...

    @property
    def localns(self) -> Mapping[str, Any] | None: ...


Registry = MutableMapping[str, Any]


def _uses(plan: Plan, resolver: Callable[..., Any]) -> bool:
    # `==` rather than `is`: `svc.get` builds a new, equal bound method on each access.
    return any(step.fn is resolver or step.fn == resolver for step in plan.steps)


def _describe(fn: Callable[..., Any]) -> str:
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{name}{where}"


class ResolverOverrides:
    """The overrides active on one server's registries, stacked in the order they began."""

    def __init__(
        self, owner: str, registries: Sequence[Registry], *, validate_resolvers: bool = False
    ) -> None:
        self._owner = owner
        self._registries = tuple(registries)
        self._validate_resolvers = validate_resolvers
        self._active: list[tuple[Callable[..., Any], Callable[..., Any]]] = []

    @property
    def active(self) -> bool:
        return bool(self._active)

    @contextmanager
    def override(
        self,
        resolver: Callable[..., Any],
        replacement: Callable[..., Any],
        localns: Mapping[str, Any] | None = None,
    ) -> Generator[None]:
        """Run `replacement` wherever `resolver` fills a parameter, until the block ends.

        Raises `InvalidSignature` (nothing changed) when the replacement could not be compiled
        in its place, and `ValueError` when nothing registered uses `resolver`.
        """
        for role, fn in (("resolver", resolver), ("replacement", replacement)):
            if not callable(fn):
                msg = f"override() needs a callable {role}, got {fn!r} (of type {type(fn).__name__})"
                raise TypeError(msg)
        substitutes = {**dict(self._active), resolver: replacement}
        swaps = self._recompile(resolver, substitutes, localns or {})
        if not swaps:
            msg = (
                f"no tool, prompt or resource of server {self._owner!r} uses resolver "
                f"{_describe(resolver)}; pass the very function named in Resolve(...), "
                "not a copy, a wrapper or a function of the same name from another module"
            )
            raise ValueError(msg)
        previous = [(registry, key, registry[key], new) for registry, key, new in swaps]
        for registry, key, _, new in previous:
            registry[key] = new
        self._active.append((resolver, replacement))
        try:
            yield
        finally:
            self._active.pop()
            for registry, key, old, new in previous:
                if registry.get(key) is new:  # re-registered meanwhile: the newer entry stays
                    registry[key] = old

    def _recompile(
        self,
        resolver: Callable[..., Any],
        substitutes: Mapping[Callable[..., Any], Callable[..., Any]],
        localns: Mapping[str, Any],
    ) -> list[tuple[Registry, str, Any]]:
        """Every affected entry compiled anew; raises before anything is swapped."""
        swaps: list[tuple[Registry, str, Any]] = []
        for registry in self._registries:
            for key, entry in list(registry.items()):
                typed: _Entry = entry
                plan = typed.plan
                if not _uses(plan, resolver):
                    continue
                namespace = {**localns, **(typed.localns or {})}
                new_plan = compile_mcp_plan(
                    plan.fn, plan.name, namespace, substitutes, validate_resolvers=self._validate_resolvers
                )
                # A tool's traced plan is left out of the copy: built from the new plan on first use.
                new_entry: Any = dataclasses.replace(entry, plan=new_plan)
                swaps.append((registry, key, new_entry))
        return swaps
