"""What registering a tool, prompt or resource starts with: its published name and its plan."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

from mcp_types import Icon

from mcpdi._adapters import adapt_edge
from mcpdi._checks import ArgumentCheck, check_arguments, check_boundaries, check_kept, check_questions
from mcpdi._context import Context
from mcpdi.engine import Answer, AskCallback, Plan, RunFunction, compile_plan

__all__ = (
    "caller_namespace",
    "compile_mcp_plan",
    "fields_as_typed",
    "function_name",
    "published_description",
    "published_name",
)


def caller_namespace(depth: int) -> Mapping[str, Any]:
    """The locals of the frame that registers a function: where its local resolvers live.

    A function's locals are copied (they are a snapshot anyway); at module level they are the
    module's globals, kept as that dict rather than copied, since every registered entry keeps
    its namespace (for overrides) and a copy per tool would weigh as much as the module.
    """
    frame = sys._getframe(depth + 1)  # pyright: ignore[reportPrivateUsage]
    names = frame.f_locals
    return names if names is frame.f_globals else dict(names)


def function_name(fn: Callable[..., Any]) -> str:
    """The function's own name (a callable instance: its class's name)."""
    return getattr(fn, "__name__", type(fn).__name__)


def published_name(fn: Callable[..., Any], name: str | None, decorator: str) -> str:
    """`name`, else the function's own; a lambda has none to publish, so `@mcp.<decorator>` needs one."""
    fn_name = function_name(fn)
    if name is None and fn_name == "<lambda>":
        msg = f"A lambda has no name to publish; pass @mcp.{decorator}(name=...) or use a def"
        raise ValueError(msg)
    return name or fn_name


def published_description(fn: Callable[..., Any], description: str | None) -> str:
    """`description`, else the docstring as written, else "": what clients of the reference SDK see."""
    return description or getattr(fn, "__doc__", None) or ""


def fields_as_typed(icons: Sequence[Any] | None, *fields: tuple[object, type]) -> bool:
    """Whether the published fields already are of the wire model's types (each value None or
    exactly its type; `icons` None or a list of `Icon`), so that building the model later cannot
    refuse them: otherwise it is built at registration, where a mistake belongs."""
    if icons is not None:
        if type(icons) is not list:
            return False
        if any(type(icon) is not Icon for icon in cast("list[Any]", icons)):
            return False
    return all(value is None or type(value) is kind for value, kind in fields)


def compile_mcp_plan(
    fn: Callable[..., Any],
    name: str,
    localns: Mapping[str, Any] | None,
    substitutes: Mapping[Callable[..., Any], Callable[..., Any]] | None = None,
    *,
    validate_resolvers: bool = False,
) -> Plan:
    """`compile_plan` with `Context` injected and MCP's edges, then the resolvers' contract checked.

    `substitutes` maps resolvers to their replacements (test overrides). `validate_resolvers=True`
    checks every resolver's results as `Resolve(fn, validate=True)` does.
    """
    adapt = partial(adapt_edge, validate_all=validate_resolvers) if validate_resolvers else adapt_edge
    plan = compile_plan(
        fn, context_types=(Context,), adapt=adapt, localns=localns, name=name, substitutes=substitutes
    )
    check_questions(plan)
    check_kept(plan)
    _warn_of_unannotated_context(plan)
    checks = check_boundaries(plan)
    if not checks:
        return plan
    return replace(plan, run=_checking(plan.run, checks), resolve=_checking(plan.resolve, checks))


_CONTEXT_NAMES = frozenset({"ctx", "context"})
logger = logging.getLogger("mcpdi")


def _warn_of_unannotated_context(plan: Plan) -> None:
    """A `ctx` parameter without its `Context` annotation is a call argument the model must
    send, which is rarely what the name means: say so at registration."""
    for argument in plan.arguments:
        if argument.name in _CONTEXT_NAMES:
            logger.warning(
                "%s (%s): parameter %r is not annotated as Context, so it is a call argument the "
                "client must send; write `%s: Context` to receive the request's Context",
                plan.name,
                plan.location,
                argument.name,
                argument.name,
            )


def _checking(run: RunFunction, checks: tuple[ArgumentCheck, ...]) -> RunFunction:
    """`run` that first checks the arguments resolvers take with a narrower type than the root."""

    async def run_checked(
        arguments: Mapping[str, Any],
        context: Mapping[type, Any] | None = None,
        answers: Mapping[str, Answer] | None = None,
        ask: AskCallback | None = None,
    ) -> Any:
        check_arguments(checks, arguments)
        if context is None:
            return await run(arguments, answers=answers, ask=ask)
        return await run(arguments, context, answers, ask)

    run_checked.checks = checks  # type: ignore[attr-defined]  # read by `with_same_checks`
    return run_checked


def with_same_checks(plan: Plan, derived: Plan) -> Plan:
    """`derived` (a plan rebuilt from `plan`, e.g. traced) checking arguments as `plan` does."""
    checks: tuple[ArgumentCheck, ...] | None = getattr(plan.run, "checks", None)
    if not checks:
        return derived
    return replace(derived, run=_checking(derived.run, checks), resolve=_checking(derived.resolve, checks))
