"""What registering a tool, prompt or resource starts with: its published name and its plan."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpdi._context import Context
from mcpdi._edges import adapt_edge, check_questions
from mcpdi.engine import Plan, compile_plan

__all__ = ("compile_mcp_plan", "function_name", "published_description", "published_name")


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


def compile_mcp_plan(fn: Callable[..., Any], name: str, localns: Mapping[str, Any] | None) -> Plan:
    """`compile_plan` with `Context` injected and MCP's edges, then the resolvers' questions checked."""
    plan = compile_plan(fn, context_types=(Context,), adapt=adapt_edge, localns=localns, name=name)
    check_questions(plan, localns)
    return plan
