"""Capability fallbacks: what a question does when the client cannot answer it.

The client cannot answer when it did not declare the capability, or when the connection has
no way to carry a request to it (a handshake-era HTTP endpoint without sessions or streams).
A question's `fallback` decides: `Default(value)` answers it on the server, `AskModel()` ends
the call with a tool error telling the model to pass the value as an argument, and no
fallback keeps the error the call would have had (`-32021`, or the no-back-channel text).
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_types import ClientCapabilities

from mcpdi._asking import AskModel, Default, FallbackAnswer, MCPQuestion
from mcpdi._errors import ToolError
from mcpdi.engine import Answer, ArgumentBinding, Asked, NeedsInput

__all__ = ("NO_BACK_CHANNEL", "fall_back", "fallback_answers", "missing_reason", "resolver_fall_back")


def _ask_model(
    tool: str | None, asker: str, arguments: tuple[str, ...], question: MCPQuestion, reason: str
) -> ToolError:
    fallback = question.fallback
    assert isinstance(fallback, AskModel)
    names = (fallback.argument,) if fallback.argument is not None else arguments
    called = f"{tool!r}" if tool is not None else "the tool"
    if not names and fallback.hint is None:
        msg = (
            f"{asker} falls back to AskModel(), but takes no argument of {called} the model could "
            "pass instead; give the resolver a parameter named after a tool argument (and return "
            "that value when it is set), or write AskModel(argument=...) or AskModel(hint=...)"
        )
        raise TypeError(msg)
    text = f"{question.subject} cannot reach the client ({reason})"
    if names:
        plural = "s" if len(names) > 1 else ""
        listed = ", ".join(repr(name) for name in names)
        text += f"; call {called} again and pass the value as argument{plural} {listed}"
    if fallback.hint is not None:
        text += f". {fallback.hint}"
    return ToolError(text)


def fall_back(
    tool: str | None,
    question: MCPQuestion,
    reason: str,
    *,
    asker: str,
    arguments: tuple[str, ...] = (),
) -> FallbackAnswer | None:
    """The answer of a `Default`; raises the `AskModel` tool error; None without a fallback.

    `reason` says why the client cannot answer, as the model reads it; `asker` names who asked
    (for the author's mistakes) and `arguments` the tool arguments it takes.
    """
    fallback = question.fallback
    if isinstance(fallback, Default):
        return FallbackAnswer(fallback.value)
    if isinstance(fallback, AskModel):
        raise _ask_model(tool, asker, arguments, question, reason)
    return None


def resolver_fall_back(tool: str, item: Asked, question: MCPQuestion, reason: str) -> FallbackAnswer | None:
    """`fall_back` for a question a resolver returned: the model may pass what the resolver takes."""
    step = item.step
    arguments = tuple(b.argument for b in step.bindings if isinstance(b, ArgumentBinding))
    asker = f"Resolver {step.name!r} ({step.location})"
    return fall_back(tool, question, reason, asker=asker, arguments=arguments)


NO_BACK_CHANNEL = "this connection cannot carry requests to the client"


def missing_reason(name: str) -> str:
    """Why a client that lacks a capability cannot answer."""
    return f"it did not declare the {name} capability"


def fallback_answers(
    tool: str, needs: NeedsInput, capabilities: ClientCapabilities | None
) -> Mapping[str, Answer]:
    """Answers from the fallbacks of the questions this client cannot answer (2026-07-28 rounds).

    Questions without a fallback are left for the round to refuse with `-32021`.
    """
    answers: dict[str, Answer] = {}
    for item in needs.questions:
        question = item.question
        if not isinstance(question, MCPQuestion) or question.fallback is None:
            continue
        missing = question.missing_capability(capabilities)
        if missing is None:
            continue
        payload = resolver_fall_back(tool, item, question, missing_reason(missing.name))
        if payload is not None:
            answers[item.key] = Answer(item.digest, payload)
    return answers
