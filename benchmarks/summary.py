"""The goals of the benchmark run, each judged from what the layers measured in that run.

Every layer returns `Verdict`s besides printing its tables; `python -m benchmarks` prints
them together at the end as one table: the goal, the figure it was judged on, and met,
missed or not measured (a layer that was not run, or failed, says so instead of a figure).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Verdict:
    item: str  # the goal's number in the list of goals, e.g. "1", "4"
    goal: str
    figure: str
    met: bool | None  # None: not measured in this run
    # a peer's figure printed beside mcpdi's (e.g. whether the SDK's cost is linear): shown,
    # never counted as a goal of mcpdi's met or missed
    reference: bool = False

    @property
    def mark(self) -> str:
        if self.reference:
            return (
                "reference" if self.met is None else f"reference ({'holds' if self.met else 'does not hold'})"
            )
        return "not measured" if self.met is None else "met" if self.met else "MISSED"


def not_measured(item: str, goal: str, why: str, *, reference: bool = False) -> Verdict:
    return Verdict(item, goal, why, None, reference)


def is_peer(impl: str) -> bool:
    """Whether a row's implementation is a peer's (`mcp`, `mcp legacy`), not mcpdi's own."""
    return impl.split()[0] != "mcpdi"


@dataclass(frozen=True, slots=True)
class Linearity:
    """Whether a cost grows at most linearly with a size: per-unit cost at each size at most
    `SLACK` times the lowest per-unit cost at any smaller size (fixed costs make small sizes
    dearer per unit, so only growth counts); `bend` is the first size past that, if any."""

    sizes: tuple[int, ...]
    per_unit: tuple[float, ...]
    bend: int | None

    @property
    def linear(self) -> bool:
        return self.bend is None

    def describe(self, unit: str, fmt: Callable[[float], str] = lambda x: f"{x:.3g}") -> str:
        steps = ", ".join(f"{s:,}: {fmt(v)}" for s, v in zip(self.sizes, self.per_unit, strict=True))
        where = "linear" if self.bend is None else f"bends at {self.bend:,}"
        return f"{where} ({unit} {steps})"


SLACK = 1.5


def linearity(sizes: Sequence[int], totals: Sequence[float]) -> Linearity:
    """Judge `totals` (the cost at each of the increasing `sizes`) for linear growth."""
    per_unit = tuple(t / s for s, t in zip(sizes, totals, strict=True))
    bend: int | None = None
    for i in range(1, len(sizes)):
        if per_unit[i] > SLACK * min(per_unit[:i]):
            bend = sizes[i]
            break
    return Linearity(tuple(sizes), per_unit, bend)


def format_table(verdicts: Sequence[Verdict]) -> str:
    lines = [
        "| # | goal | measured | verdict |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {v.item} | {v.goal} | {v.figure} | {v.mark} |" for v in verdicts]
    goals = [v for v in verdicts if not v.reference]
    met = sum(1 for v in goals if v.met)
    missed = sum(1 for v in goals if v.met is False)
    counts = f"{met} met, {missed} missed, {len(goals) - met - missed} not measured"
    if len(goals) < len(verdicts):
        counts += f" ({len(verdicts) - len(goals)} reference rows for the peers, not counted)"
    lines += ["", counts]
    return "\n".join(lines)
