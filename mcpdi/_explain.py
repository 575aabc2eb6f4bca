"""Explaining an MCP tool: the engine's explanation with MCP's questions, capabilities and headers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpdi._asking import MCPQuestion
from mcpdi._tools._compiled import RegisteredTool
from mcpdi.engine import InvalidSignature, Step
from mcpdi.engine._explain import Explanation, explain, question_classes, worst_case_chain

__all__ = ("check_max_rounds", "explain_tool")

CAPABILITY_OF_METHOD: Mapping[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def _asker(localns: Mapping[str, Any] | None) -> Callable[[Step], tuple[str, ...]]:
    def asks(step: Step) -> tuple[str, ...]:
        methods = tuple(cls.method for cls in question_classes(step, localns) if issubclass(cls, MCPQuestion))
        # An unannotated resolver may return any question: it counts as asking, of an unknown kind.
        return methods or ("a question",)

    return asks


def explain_tool(tool: RegisteredTool) -> Explanation:
    """`tool`'s plan explained: who reads what, who asks what, the capabilities and rounds needed."""
    headers = {param.argument: param.token for param in tool.header_params}
    return explain(
        tool.plan,
        asks=_asker(tool.localns),
        capability_of=CAPABILITY_OF_METHOD.get,
        header_of=lambda argument: headers.get(argument.name),
    )


def check_max_rounds(tool: RegisteredTool, max_rounds: object, fn: Any) -> None:
    """Registration's check of `@mcp.tool(max_rounds=n)`: the graph must not be able to ask longer."""
    if max_rounds is None:
        return
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 0:
        msg = (
            f"Tool {tool.name!r}: max_rounds must be a whole number of rounds (0 or more), got {max_rounds!r}"
        )
        raise InvalidSignature(msg, function=fn)
    explanation = explain_tool(tool)
    if explanation.worst_case_rounds <= max_rounds:
        return
    chain = " -> ".join(f"{node.name} ({node.location})" for node in worst_case_chain(explanation))
    msg = (
        f"Tool {tool.name!r} ({tool.plan.location}) can ask in {explanation.worst_case_rounds} rounds, "
        f"over max_rounds={max_rounds}: each of {chain} asks after the one before has its answer. "
        "Ask for several fields in one Elicit form, make a resolver independent of an earlier "
        "answer, put resolvers that cannot ask after the questions, or raise max_rounds."
    )
    raise InvalidSignature(msg, function=fn)
