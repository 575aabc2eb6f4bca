"""`ScriptedClient`: a real in-memory call whose questions are answered from a script.

The script is a list of rules, each a resolver (the question it asks) or a predicate on the
question, with the reply to give. Every question is recorded in order with its round; one
no rule answers fails the test with the question shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from mcp_types import CallToolResult

from mcpdi._auth import AccessToken, authenticated
from mcpdi._in_memory._client import ALL_CAPABILITIES, MODERN
from mcpdi._in_memory._lifespan import Runnable, session_of
from mcpdi.engine import Plan, Step
from mcpdi.lowlevel._errors import MCPError
from mcpdi.testing._replies import Reply

__all__ = ("AskedQuestion", "ScriptedClient", "UnexpectedQuestion")


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """One question the server asked the client during a call."""

    method: str  # "elicitation/create", "sampling/createMessage" or "roots/list"
    params: Mapping[str, Any] | None
    resolver: Callable[..., Any] | None  # the resolver that asked, when the tool's plan names it
    round: int  # 1-based; always 1 in the handshake era, where questions arrive mid-call

    @property
    def message(self) -> str | None:
        """The elicitation's message (None for other questions)."""
        return None if self.params is None else self.params.get("message")

    def describe(self) -> str:
        who = getattr(self.resolver, "__name__", None) or "an unknown resolver"
        text = f"{self.method} from {who} in round {self.round}"
        if self.message is not None:
            text += f": {self.message!r}"
        return text


class UnexpectedQuestion(AssertionError):
    """The server asked a question no rule of the script answers."""


ReplyFor = Reply | Callable[[AskedQuestion], Reply]


@dataclass(frozen=True, slots=True)
class _Rule:
    resolver: Callable[..., Any] | None
    predicate: Callable[[AskedQuestion], bool] | None
    reply: ReplyFor

    def matches(self, question: AskedQuestion) -> bool:
        if self.predicate is not None:
            return bool(self.predicate(question))
        return question.resolver is not None and (
            question.resolver is self.resolver or question.resolver == self.resolver
        )

    def describe(self) -> str:
        if self.resolver is not None:
            return f"resolver {getattr(self.resolver, '__name__', self.resolver)!r}"
        return f"predicate {getattr(self.predicate, '__name__', self.predicate)!r}"


def _upstream_keys(steps: Mapping[str, Step], key: str | None) -> set[str]:
    """The keys of every resolver the step `key` depends on, directly or not."""
    found: set[str] = set()
    todo = [steps[key]] if key is not None and key in steps else []
    while todo:
        for edge in todo.pop().edges:
            if edge.provider.key not in found:
                found.add(edge.provider.key)
                todo.append(edge.provider)
    return found


class ScriptedClient:
    """Calls a server's tools in memory (either era), answering from rules added with `answer`.

    After a call, `questions` holds what the server asked, in order; `rounds` is how many
    rounds asked the client, and `requests` how many `tools/call` requests the call took. At
    2026-07-28 each round is a request; in the handshake era the questions arrive within one
    request, and a question's round is one more than that of the latest question asked by a
    resolver it depends on, as it would be at 2026-07-28. `principal` is the verified access
    token every call runs with, as over HTTP with bearer auth (scopes, token-bound state).
    """

    def __init__(
        self,
        server: Runnable,
        *,
        protocol_version: str = MODERN,
        capabilities: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        max_rounds: int = 10,
        principal: AccessToken | None = None,
    ) -> None:
        self.server = server
        self.principal = principal
        self.protocol_version = protocol_version
        self.capabilities = dict(ALL_CAPABILITIES if capabilities is None else capabilities)
        self.headers = headers
        self.max_rounds = max_rounds
        self.questions: list[AskedQuestion] = []
        self.rounds = 0
        self.requests = 0
        self._rules: list[_Rule] = []

    def answer(self, resolver: Callable[..., Any], reply: ReplyFor) -> ScriptedClient:
        """Answer every question `resolver` asks with `reply` (or `reply(question)`)."""
        if not callable(resolver):
            msg = f"answer() needs the resolver function, got {resolver!r}"
            raise TypeError(msg)
        self._rules.append(_Rule(resolver, None, reply))
        return self

    def answer_when(self, predicate: Callable[[AskedQuestion], bool], reply: ReplyFor) -> ScriptedClient:
        """Answer every question for which `predicate(question)` is true with `reply`."""
        self._rules.append(_Rule(None, predicate, reply))
        return self

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> CallToolResult:
        """Call `name` as a client would; a protocol error raises `MCPError`."""
        self.questions = []
        self.rounds = 0
        self.requests = 0
        steps = self._steps_of(name)
        fns = {key: step.fn for key, step in steps.items()}
        round_of_key: dict[str, int] = {}
        failures: list[AssertionError] = []
        session = session_of(self.server)

        def script(key: str | None, method: str, params: Mapping[str, Any] | None) -> Any:
            if client.modern:
                round_number = client.round
            else:
                upstream = _upstream_keys(steps, key)
                round_number = 1 + max((round_of_key.get(k, 0) for k in upstream), default=0)
            round_of_key[key or ""] = round_number
            question = AskedQuestion(method, params, fns.get(key or ""), round_number)
            self.questions.append(question)
            try:
                return self._reply(name, question)
            except AssertionError as failure:
                failures.append(failure)
                if client.modern:
                    raise
                # Handshake era: the question is a request the server awaits; refuse it so the call ends.
                raise MCPError(-32601, f"the scripted client cannot answer {method}") from None

        client = await session.client(
            protocol_version=self.protocol_version,
            capabilities=self.capabilities,
            script=script,
            headers=self.headers,
        )
        with authenticated(self.principal) if self.principal is not None else nullcontext():
            exchange = await client.call_tool(name, dict(arguments or {}), max_rounds=self.max_rounds)
        if failures:
            raise failures[0]
        self.requests = exchange.rounds
        self.rounds = max((question.round for question in self.questions), default=0)
        if "error" in exchange.response:
            error = exchange.error
            raise MCPError(error["code"], error["message"], error.get("data"))
        return CallToolResult.model_validate(exchange.result)

    def _reply(self, tool: str, question: AskedQuestion) -> dict[str, Any]:
        for rule in self._rules:
            if rule.matches(question):
                reply = rule.reply if isinstance(rule.reply, Reply) else rule.reply(question)
                return reply.for_method(question.method, question.describe())
        raise UnexpectedQuestion(self._unexpected(tool, question))

    def _steps_of(self, name: str) -> dict[str, Step]:
        registered = getattr(self.server, "registered_tool", None)
        if registered is None:
            return {}
        try:
            plan: Plan = registered(name).plan
        except KeyError:
            return {}
        return {step.key: step for step in plan.steps}

    def _unexpected(self, tool: str, question: AskedQuestion) -> str:
        rules = ", ".join(rule.describe() for rule in self._rules) or "none"
        shown = question.describe()
        if question.message is None:
            shown += f" with params {json.dumps(question.params, sort_keys=True, default=str)}"
        return (
            f"tool {tool!r} asked {shown}; "
            f"no rule of the script answers it (rules: {rules}). Add "
            ".answer(resolver, reply) or .answer_when(predicate, reply)."
        )
