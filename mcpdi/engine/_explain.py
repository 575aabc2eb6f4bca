"""Explaining a compiled plan: who reads what, who may ask, and the worst-case number of rounds.

`explain(plan)` returns a typed, frozen `Explanation`; `render_text`, `render_mermaid` and
`explanation_json` draw it. Plans are read only through `_PlanReader`, so a change to the
plan's internals touches one class. The host says what a resolver may ask (`asks`) and
which of the caller's capabilities a question needs (`capability_of`): the engine knows
questions only as the `Question` family.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from mcpdi.engine._plan import Argument, Binding, Plan, Step
from mcpdi.engine._question import Question

__all__ = (
    "Explanation",
    "Input",
    "Node",
    "explain",
    "explanation_json",
    "render_mermaid",
    "render_text",
    "returned_annotation",
    "worst_case_chain",
)

InputSource = Literal["argument", "context", "resolved"]


@dataclass(frozen=True, slots=True)
class Input:
    """One parameter of a resolver or of the root, and where its value comes from."""

    parameter: str
    source: InputSource
    origin: str  # the argument's name, the context type's name, or the providing resolver's key
    origin_name: str  # what a person reads: the argument, the context type or the resolver's name


@dataclass(frozen=True, slots=True)
class Node:
    """One resolver: where it is, what it reads, and what it may ask."""

    key: str
    name: str
    qualname: str
    location: str
    is_async: bool
    scope: str
    inputs: tuple[Input, ...]
    asks: tuple[str, ...]  # the questions it may ask (the host's names); empty: it never asks
    round: int | None  # the latest round its question can come in; None when it never asks


@dataclass(frozen=True, slots=True)
class Explanation:
    """A plan as a person reads it: resolvers in run order, then the root's own inputs."""

    name: str
    location: str
    arguments: tuple[str, ...]
    headers: tuple[tuple[str, str], ...]  # (argument, header name) pairs the host mirrors
    nodes: tuple[Node, ...]
    inputs: tuple[Input, ...]
    capabilities: tuple[str, ...]  # what the caller must support for every question to be asked
    worst_case_rounds: int  # the longest chain of questions that each wait for the one before


class _PlanReader:
    """The one place that reads a compiled plan's attributes."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def steps(self) -> tuple[Step, ...]:
        return self.plan.steps

    def arguments(self) -> tuple[Argument, ...]:
        return self.plan.arguments

    def root_bindings(self) -> tuple[Binding, ...]:
        return self.plan.bindings

    @staticmethod
    def bindings(step: Step) -> tuple[Binding, ...]:
        return step.bindings

    @staticmethod
    def scope(step: Step) -> str:
        return str(getattr(step, "scope", "round"))

    @staticmethod
    def providers(step: Step) -> tuple[Step, ...]:
        return tuple(edge.provider for edge in step.edges)

    @staticmethod
    def may_ask(step: Step) -> bool:
        return step.may_ask

    @staticmethod
    def returns(step: Step, localns: Mapping[str, Any] | None = None) -> Any:
        """The step's return annotation: as compile recorded it, else read now (`Any` if unreadable)."""
        recorded = getattr(step, "returns", _UNRECORDED)
        if recorded is not _UNRECORDED:
            return recorded
        fn: Any = step.fn
        target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        try:
            hints = typing.get_type_hints(target, localns=dict(localns or {}), include_extras=True)
        except Exception:  # registration reported unreadable hints of the parameters already
            return Any
        return hints.get("return", Any)


_UNRECORDED: Any = object()


def returned_annotation(step: Step, localns: Mapping[str, Any] | None = None) -> Any:
    """What a resolver's return annotation says (`Any` when it has none or it cannot be read)."""
    return _PlanReader.returns(step, localns)


def _input(binding: Binding) -> Input:
    if binding.source == "argument":
        return Input(binding.parameter, "argument", binding.argument, binding.argument)
    if binding.source == "context":
        kind = binding.context_type
        name = getattr(kind, "__name__", str(kind))
        return Input(binding.parameter, "context", name, name)
    assert binding.edge is not None
    provider = binding.edge.provider
    return Input(binding.parameter, "resolved", provider.key, provider.name)


def question_classes(step: Step, localns: Mapping[str, Any] | None = None) -> tuple[type, ...]:
    """The `Question` classes a resolver's return annotation names (empty when it has none)."""
    returned = returned_annotation(step, localns)
    arms = typing.get_args(returned) if typing.get_origin(returned) in (typing.Union, _UnionType) else ()
    found: list[type] = []
    for arm in arms or (returned,):
        if typing.get_origin(arm) is typing.Annotated:
            arm = typing.get_args(arm)[0]
        origin = typing.get_origin(arm) or arm
        if isinstance(origin, type) and issubclass(origin, Question):
            found.append(origin)
    return tuple(found)


_UnionType: Any = type(int | str)
_ASYNC_CLEANUPS = frozenset({"async_generator", "async_context_manager"})


def _default_asks(step: Step) -> tuple[str, ...]:
    if not step.may_ask:
        return ()
    return tuple(cls.__name__ for cls in question_classes(step)) or ("a question",)


def explain(
    plan: Plan,
    *,
    asks: Callable[[Step], tuple[str, ...]] | None = None,
    capability_of: Callable[[str], str | None] | None = None,
    header_of: Callable[[Argument], str | None] | None = None,
) -> Explanation:
    """What `plan` runs and reads, who may ask what, and its worst-case number of rounds.

    `asks(step)` names what a resolver may ask (default: the `Question` classes of its return
    annotation); `capability_of(name)` the caller capability a question needs; `header_of`
    the header an argument is mirrored to.
    """
    reader = _PlanReader(plan)
    asks = asks or _default_asks
    nodes = [
        Node(
            key=step.key,
            name=step.name,
            qualname=step.qualname,
            location=step.location,
            is_async=step.is_async or step.cleanup in _ASYNC_CLEANUPS,
            scope=reader.scope(step),
            inputs=tuple(_input(b) for b in reader.bindings(step)),
            asks=asks(step) if reader.may_ask(step) else (),
            round=None,
        )
        for step in reader.steps()  # run order: providers come first
    ]
    timeline = _timeline(nodes)
    nodes = [replace(node, round=timeline[node.key][0]) if node.asks else node for node in nodes]
    capabilities: list[str] = []
    for node in nodes:
        for question in node.asks:
            capability = capability_of(question) if capability_of is not None else None
            if capability is not None and capability not in capabilities:
                capabilities.append(capability)
    headers = tuple(
        (argument.name, header)
        for argument in reader.arguments()
        if header_of is not None and (header := header_of(argument)) is not None
    )
    return Explanation(
        name=plan.name,
        location=plan.location,
        arguments=tuple(argument.name for argument in reader.arguments()),
        headers=headers,
        nodes=tuple(nodes),
        inputs=tuple(_input(b) for b in reader.root_bindings()),
        capabilities=tuple(capabilities),
        worst_case_rounds=max((node.round or 0 for node in nodes), default=0),
    )


Waits = tuple[int, str | None]  # rounds of answers, and the asking resolver answered last


def _timeline(nodes: Sequence[Node]) -> dict[str, Waits]:
    """Per resolver, in the worst case (every resolver that may ask does): the latest round its
    question comes in (an asking one) or the number of rounds of answers it waits for (another
    one), and the asking resolver whose answer it waits for last (None: it waits for none).

    A resolver waits for the questions of the resolvers it depends on; one that never asks also
    waits for every question before it in run order, and the resolvers after it wait with it.
    """
    timeline: dict[str, Waits] = {}
    held: Waits = (0, None)  # what the last resolver that never asks waited for
    latest: Waits = (0, None)  # the latest question so far
    for node in nodes:  # run order: providers come first
        candidates = [held, *(timeline[i.origin] for i in node.inputs if i.source == "resolved")]
        if not node.asks:
            candidates.append(latest)
        ready = max(candidates, key=_rounds_of)
        if node.asks:
            timeline[node.key] = (ready[0] + 1, node.key)
            latest = max(latest, timeline[node.key], key=_rounds_of)
        else:
            timeline[node.key] = held = ready
    return timeline


def _rounds_of(waits: Waits) -> int:
    return waits[0]


def _previous(timeline: Mapping[str, Waits], node: Node) -> str | None:
    """The asking resolver whose answer an asking `node` waits for last (None: the first round)."""
    return None if node.round == 1 else _waited_for(timeline, node)


def _waited_for(timeline: Mapping[str, Waits], node: Node) -> str | None:
    best: Waits = (0, None)
    for key, entry in timeline.items():
        if key == node.key:
            break
        if entry[1] is not None and entry[0] == (node.round or 0) - 1:
            best = entry
    return best[1]


def worst_case_chain(explanation: Explanation) -> tuple[Node, ...]:
    """The asking resolvers of one longest chain of questions that each wait for the one
    before (through a dependency, or a resolver that never asks between them), first asked first."""
    by_key = {node.key: node for node in explanation.nodes}
    timeline = _timeline(explanation.nodes)
    candidates = [node for node in explanation.nodes if node.round is not None]
    current = max(candidates, key=lambda n: n.round or 0, default=None)
    chain: list[Node] = []
    while current is not None:
        chain.append(current)
        previous = _previous(timeline, current)
        current = by_key[previous] if previous is not None else None
    return tuple(reversed(chain))


def _short(location: str, base: str | None) -> str:
    if base and location.startswith(base.rstrip("/") + "/"):
        return location[len(base.rstrip("/")) + 1 :]
    return location


def _reads(inputs: Sequence[Input]) -> list[str]:
    return [
        f"     {i.parameter} <- {i.source if i.source != 'resolved' else 'resolver'} {i.origin_name}"
        for i in inputs
    ]


def render_text(explanation: Explanation, *, base: str | None = None) -> str:
    """The plan as text: resolvers in run order with their inputs, then the root's.

    `base` (a directory) is cut from the start of locations.
    """
    e = explanation
    lines = [f"tool {e.name} ({_short(e.location, base)})"]
    lines.append("arguments: " + (", ".join(e.arguments) or "-"))
    if e.headers:
        lines.append("headers: " + ", ".join(f"{arg} <- Mcp-Param-{header}" for arg, header in e.headers))
    lines.append(f"worst-case rounds: {e.worst_case_rounds}")
    lines.append("client capabilities: " + (", ".join(e.capabilities) or "-"))
    for number, node in enumerate(e.nodes, 1):
        facts = ["async" if node.is_async else "sync", f"scope {node.scope}"]
        if node.asks:
            facts.append(f"asks {', '.join(node.asks)} (round {node.round})")
        lines.append(f"{number}. {node.name} ({_short(node.location, base)}) {', '.join(facts)}")
        lines.extend(_reads(node.inputs))
    lines.append(e.name)
    lines.extend(_reads(e.inputs))
    return "\n".join(lines)


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def render_mermaid(explanations: Sequence[Explanation]) -> str:
    """One Mermaid flowchart: per plan, its arguments, resolvers (asking ones as hexagons) and root."""
    lines = ["flowchart TD"]
    several = len(explanations) > 1
    for index, e in enumerate(explanations):
        prefix = f"t{index}_" if several else ""
        indent = "    "
        if several:
            lines.append(f'    subgraph {prefix}tool["{_label(e.name)}"]')
            indent = "        "
        for argument in e.arguments:
            lines.append(f'{indent}{prefix}arg_{argument}[/"{_label(argument)}"/]')
        for node in e.nodes:
            label = f"{node.name}<br/>scope {node.scope}"
            if node.asks:
                label += f"<br/>asks {', '.join(node.asks)} (round {node.round})"
                lines.append(f'{indent}{prefix}{node.key}{{{{"{_label(label)}"}}}}')
            else:
                lines.append(f'{indent}{prefix}{node.key}["{_label(label)}"]')
        title = f"{e.name}<br/>worst-case rounds: {e.worst_case_rounds}"
        lines.append(f'{indent}{prefix}root(["{_label(title)}"])')
        for target, inputs in [*((node.key, node.inputs) for node in e.nodes), ("root", e.inputs)]:
            for i in inputs:
                if i.source == "argument":
                    lines.append(f"{indent}{prefix}arg_{i.origin} --> {prefix}{target}")
                elif i.source == "resolved":
                    lines.append(f"{indent}{prefix}{i.origin} -->|{i.parameter}| {prefix}{target}")
        if several:
            lines.append("    end")
    return "\n".join(lines)


def explanation_record(explanation: Explanation) -> dict[str, Any]:
    """The JSON-ready shape of one explanation (documented in docs/cli.md)."""
    e = explanation

    def reads(inputs: Sequence[Input]) -> list[dict[str, str]]:
        return [{"parameter": i.parameter, "source": i.source, "from": i.origin} for i in inputs]

    return {
        "name": e.name,
        "location": e.location,
        "arguments": [
            {"name": argument, "header": dict(e.headers).get(argument)} for argument in e.arguments
        ],
        "resolvers": [
            {
                "key": node.key,
                "name": node.name,
                "qualname": node.qualname,
                "location": node.location,
                "async": node.is_async,
                "scope": node.scope,
                "asks": list(node.asks),
                "round": node.round,
                "reads": reads(node.inputs),
            }
            for node in e.nodes
        ],
        "reads": reads(e.inputs),
        "capabilities": list(e.capabilities),
        "worstCaseRounds": e.worst_case_rounds,
    }


def explanation_json(explanations: Sequence[Explanation], *, server: str) -> str:
    """`{"server": ..., "tools": [...]}` as indented JSON."""
    body = {"server": server, "tools": [explanation_record(e) for e in explanations]}
    return json.dumps(body, indent=2)
