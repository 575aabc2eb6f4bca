"""Properties over random dependency graphs: run order, once per round, and reported cycles."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any

import anyio
import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples

from mcpdi.engine import (
    Adapter,
    Answer,
    Asked,
    Edge,
    InvalidSignature,
    NeedsInput,
    Question,
    Resolve,
    ResolverError,
    compile_plan,
)

EMPTY: Mapping[type, Any] = MappingProxyType({})
Dag = tuple[int, dict[int, list[int]], list[bool]]  # size, providers of each node, which nodes are async


@st.composite
def dags(draw: st.DrawFn) -> Dag:
    size = draw(st.integers(min_value=1, max_value=12))
    providers = {
        i: sorted(draw(st.sets(st.integers(min_value=0, max_value=i - 1), max_size=i))) if i else []
        for i in range(size)
    }
    is_async = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return size, providers, is_async


def build(
    size: int, providers: dict[int, list[int]], is_async: list[bool], roots: list[int] | None = None
) -> tuple[Any, dict[str, Any]]:
    """Define f0..f{size-1} and a root in a fresh module-like namespace; each call logs its index.

    The root depends on `roots`, by default on every node nothing else depends on.
    """
    namespace: dict[str, Any] = {"__name__": "dag", "Annotated": Annotated, "Resolve": Resolve, "log": []}
    lines: list[str] = []
    for i in range(size):
        params = ", ".join(f"p{j}: 'Annotated[int, Resolve(f{j}, inline=True)]'" for j in providers[i])
        keyword = "async def" if is_async[i] else "def"
        lines += [f"{keyword} f{i}(seed: int, {params}):", f"    log.append({i})", f"    return {i}"]
    if roots is None:
        consumed = {j for deps in providers.values() for j in deps}
        roots = [i for i in range(size) if i not in consumed]
    params = ", ".join(f"p{j}: 'Annotated[int, Resolve(f{j}, inline=True)]'" for j in roots)
    lines += [f"async def root(seed: int, {params}):", "    log.append('root')", "    return 'done'"]
    exec("\n".join(lines), namespace)
    return namespace["root"], namespace


@settings(max_examples=examples(60), deadline=None)
@given(dags())
def test_every_resolver_runs_after_its_dependencies_and_exactly_once_per_round(dag: Dag) -> None:
    size, providers, is_async = dag
    root, namespace = build(size, providers, is_async)
    plan = compile_plan(root)
    for _ in range(2):
        namespace["log"].clear()
        assert anyio.run(plan.run, {"seed": 1}) == "done"
        log: list[Any] = namespace["log"]
        assert sorted(log[:-1]) == list(range(size))
        assert log[-1] == "root"
        position = {node: at for at, node in enumerate(log)}
        for consumer, deps in providers.items():
            assert all(position[dep] < position[consumer] for dep in deps)


@st.composite
def dags_with_a_back_edge(draw: st.DrawFn) -> tuple[Dag, tuple[int, int]]:
    size, providers, is_async = draw(dags())
    reaches = {i: {i} for i in range(size)}  # node -> nodes it depends on, directly or not, and itself
    for i in range(size):
        for j in providers[i]:
            reaches[i] |= reaches[j]
    back = draw(st.sampled_from(sorted((i, j) for i in range(size) for j in reaches[i])))
    return (size, providers, is_async), back


@settings(max_examples=examples(60), deadline=None)
@given(dags_with_a_back_edge())
def test_adding_a_back_edge_reports_a_cycle_that_is_a_real_cycle_of_the_graph(
    case: tuple[Dag, tuple[int, int]],
) -> None:
    (size, providers, is_async), (high, low) = case
    with_back = {i: list(deps) for i, deps in providers.items()}
    with_back[low].append(high)  # `low` now depends on `high`, which already depends on `low`
    consumed = {j for deps in providers.values() for j in deps}
    root, _ = build(size, with_back, is_async, roots=[i for i in range(size) if i not in consumed])
    with pytest.raises(InvalidSignature) as error:
        compile_plan(root)
    hops = [int(name.removeprefix("dag:f")) for name in error.value.cycle]
    assert len(hops) >= 2
    assert hops[0] == hops[-1]
    for consumer, provider in itertools.pairwise(hops):
        assert provider in with_back[consumer]
    assert " -> ".join(f"f{h}" for h in hops) in str(error.value)


@settings(max_examples=examples(30), deadline=None)
@given(dags())
def test_compiling_twice_gives_the_same_order_and_keys(dag: Dag) -> None:
    size, providers, is_async = dag
    first = compile_plan(build(size, providers, is_async)[0])
    second = compile_plan(build(size, providers, is_async)[0])
    assert [(s.name, s.key) for s in first.steps] == [(s.name, s.key) for s in second.steps]


@settings(max_examples=examples(60), deadline=None)
@given(dags(), st.data())
def test_the_run_order_is_networkx_lexicographical_topological_sort_keyed_by_depth_first_finish(
    dag: Dag, data: st.DataObject
) -> None:
    size, providers, is_async = dag
    shuffled = {i: data.draw(st.permutations(deps)) for i, deps in providers.items()}
    consumed = {j for deps in providers.values() for j in deps}
    roots = data.draw(st.permutations([i for i in range(size) if i not in consumed]))
    finished: list[object] = []  # the signatures' order, depth-first, each node as it finishes
    seen: set[int] = set()

    def walk(node: int) -> None:
        seen.add(node)
        for provider in shuffled[node]:
            if provider not in seen:
                walk(provider)
        finished.append(node)

    for node in roots:
        if node not in seen:
            walk(node)
    finish = {node: at for at, node in enumerate([*finished, "root"])}
    graph: nx.DiGraph[object] = nx.DiGraph()
    graph.add_nodes_from(finish)
    graph.add_edges_from((j, i) for i, deps in shuffled.items() for j in deps)  # provider -> consumer
    graph.add_edges_from((j, "root") for j in roots)
    expected = [
        f"f{n}" for n in nx.lexicographical_topological_sort(graph, key=finish.__getitem__) if n != "root"
    ]
    plan = compile_plan(build(size, shuffled, is_async, roots=list(roots))[0])
    assert [step.name for step in plan.steps] == expected


class Go(Question):
    def render(self) -> Mapping[str, Any]:
        return {"go": True}

    def resolve_answer(self, payload: Any) -> Any:
        return payload


def maybe_ask(ask: bool) -> Any:
    return Go() if ask else 1


async def answer_one(asked: Asked) -> Any:
    return 1


@settings(max_examples=examples(60), deadline=None)
@given(dags(), st.data())
def test_a_round_finished_after_a_question_computes_what_the_straight_path_computes(
    dag: Dag, data: st.DataObject
) -> None:
    size, providers, is_async = dag
    keyword = data.draw(st.lists(st.booleans(), min_size=size, max_size=size))
    adapted = data.draw(
        st.sets(st.sampled_from([(i, j) for i in range(size) for j in providers[i]] or [(0, 0)]))
    )
    inline = data.draw(st.lists(st.booleans(), min_size=size + 1, max_size=size + 1))  # the gate last
    namespace: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve, "maybe_ask": maybe_ask}
    lines: list[str] = []
    for i in range(size):
        params = [f"p{j}: 'Annotated[int, Resolve(f{j}, inline={inline[j]})]'" for j in providers[i]]
        if keyword[i]:
            params = ["*", *params] if params else params
        keyword_def = "async def" if is_async[i] else "def"
        total = " + ".join([str(i), *(f"p{j}" for j in providers[i])])
        gate = f"gate: 'Annotated[int, Resolve(maybe_ask, inline={inline[size]})]'"
        lines += [f"{keyword_def} f{i}({', '.join([gate, *params])}):"]
        lines += [f"    return {total}"]
    params = ", ".join(f"p{i}: 'Annotated[int, Resolve(f{i}, inline={inline[i]})]'" for i in range(size))
    lines += [f"async def root(ask: bool, {params}):", "    return 0"]
    exec("\n".join(lines), namespace)

    def adapt(edge: Edge) -> Adapter | None:
        consumer = edge.consumer.removeprefix("f")
        provider = int(edge.provider.name.removeprefix("f")) if edge.provider.name != "maybe_ask" else -1
        if consumer.isdigit() and (int(consumer), provider) in adapted:
            return Adapter(plain=lambda v: v + 1000, answered=lambda v: v + 1000)
        return None

    plan = compile_plan(namespace["root"], adapt=adapt)
    assert plan.steps[0].name == "maybe_ask"
    straight = anyio.run(plan.resolve, {"ask": False}) | {"ask": True}
    pending = anyio.run(plan.resolve, {"ask": True})
    assert isinstance(pending, NeedsInput)
    answers = {a.key: Answer(a.digest, 1) for a in pending.questions}
    assert anyio.run(plan.resolve, {"ask": True}, EMPTY, answers) == straight
    assert anyio.run(plan.resolve, {"ask": True}, EMPTY, None, answer_one) == straight


class Carry(Question):
    """Asks, and whatever the answer says, resolves to the value the step would have returned."""

    __slots__ = ("asker", "value")

    def __init__(self, value: int, asker: int | None = None) -> None:
        self.value = value
        self.asker = asker  # named: no other step asks the same question

    def render(self) -> Mapping[str, Any]:
        return {"carry": self.value} if self.asker is None else {"carry": self.value, "asker": self.asker}

    def resolve_answer(self, payload: Any) -> Any:
        return self.value


class Boom(Exception):
    pass


class AdapterBoom(Exception):
    pass


def adapters(
    failure: Any,
    shaped: Callable[[int, int], bool] = lambda consumer, provider: True,
    log: list[Any] | None = None,
) -> Callable[[Edge], Adapter | None]:
    """Adapters on the edges between resolvers: one that raises on the failure `("adapter",
    (consumer, provider))`, one that adds 1000 on each other edge `shaped` names; with `log`,
    each logs `("adapt", consumer, provider)` when it runs."""

    def adapt(edge: Edge) -> Adapter | None:
        if edge.consumer == "root":
            return None
        pair = (int(edge.consumer.removeprefix("f")), int(edge.provider.name.removeprefix("f")))
        if failure == ("adapter", pair):

            def fail(value: Any) -> Any:
                if log is not None:
                    log.append(("adapt", *pair))
                raise AdapterBoom(value)

            return Adapter(plain=fail, answered=fail)
        if shaped(*pair):

            def add(value: Any) -> Any:
                if log is not None:
                    log.append(("adapt", *pair))
                return value + 1000

            return Adapter(plain=add, answered=add)
        return None

    return adapt


Failure = tuple[str, int] | tuple[str, tuple[int, int]] | None  # ("resolver"/"root", i) / ("adapter", edge)
Root = str  # "async", "sync" (offloaded: it may join the last hop) or "inline"


# The graph, its askers, what fails, keyword-only, inline, the root, steps that cannot ask, concurrent ones.
Case = tuple[Dag, set[int], Failure, list[bool], list[bool], Root, set[int], set[int]]


@st.composite
def failing_graphs(draw: st.DrawFn) -> Case:
    size, providers, _ = draw(dags())
    mostly_false = st.sampled_from([False, False, True])  # sync and offloaded: long hops are common
    is_async = draw(st.lists(mostly_false, min_size=size, max_size=size))
    askers = draw(st.sets(st.integers(min_value=0, max_value=size - 1), min_size=1, max_size=3))
    # Steps annotated `-> int` cannot ask: a round with a pending question stops at them.
    plain = draw(st.sets(st.sampled_from(range(size)))) - askers
    edges = [(i, j) for i in range(size) for j in providers[i]]
    kinds: list[list[Failure]] = [[None], [("root", 0)], [("resolver", i) for i in range(size)]]
    if edges:
        kinds.append([("adapter", edge) for edge in edges])
    failure = draw(st.sampled_from(draw(st.sampled_from(kinds))))  # each kind as likely as another
    keyword = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    inline = draw(st.lists(mostly_false, min_size=size, max_size=size))
    root: Root = draw(st.sampled_from(["async", "sync", "inline"]))
    # Async steps may run together with the independent concurrent steps next to them.
    concurrent = draw(st.sets(st.sampled_from(range(size)))) & {i for i in range(size) if is_async[i]}
    return (size, providers, is_async), askers, failure, keyword, inline, root, plain, concurrent


def outcome(run: Any, *args: Any) -> tuple[str, Any]:
    """What a round gave: a value, a ResolverError (step name, cause type), another exception, NeedsInput."""
    try:
        value = anyio.run(run, *args)
    except ResolverError as error:
        return "resolver", (error.step.name, type(error.__cause__))
    except Exception as error:
        return "raised", type(error)
    return ("needs", value) if isinstance(value, NeedsInput) else ("value", value)


def source_of(case: Case, logged: bool) -> str:
    """f0..f{size-1} and a root for a `failing_graphs` case; `logged`: each step logs its number."""
    (size, providers, is_async), askers, failure, keyword, inline, root, plain, concurrent = case

    def marker(j: int) -> str:
        return f"'Annotated[int, Resolve(f{j}, inline={inline[j]}, concurrent={j in concurrent})]'"

    lines: list[str] = []
    for i in range(size):
        params = [f"p{j}: {marker(j)}" for j in providers[i]]
        if keyword[i] and params:
            params = ["*", *params]
        returns = " -> int" if i in plain else ""
        lines.append(
            f"{'async def' if is_async[i] else 'def'} f{i}({', '.join(['ask: bool', *params])}){returns}:"
        )
        if logged:
            lines.append(f"    log.append({i})")
        if failure == ("resolver", i):
            lines.append(f"    raise Boom({i})")
        total = " + ".join([str(i), *(f"p{j}" for j in providers[i])])
        if i in askers:
            asker = f", {i}" if logged else ""
            lines.append(f"    return Carry({total}{asker}) if ask else {total}")
        else:
            lines.append(f"    return {total}")
    params = ", ".join(f"p{i}: {marker(i)}" for i in range(size))
    lines.append(f"{'async def' if root == 'async' else 'def'} root(ask: bool, {params}):")
    if failure == ("root", 0):
        lines.append("    raise Boom('root')")
    lines.append(f"    return {' + '.join(['0', *(f'p{i}' for i in range(size))])}")
    return "\n".join(lines)


@settings(max_examples=examples(150), deadline=None)
@given(failing_graphs())
def test_after_a_question_at_any_step_a_round_gives_the_same_values_and_exceptions_as_the_straight_path(
    case: Case,
) -> None:
    _, askers, failure, _, _, root, _, _ = case
    namespace: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve, "Carry": Carry, "Boom": Boom}
    exec(source_of(case, logged=False), namespace)

    plan = compile_plan(namespace["root"], adapt=adapters(failure), root_inline=root == "inline")
    for run in (plan.resolve, plan.run):  # the root's values, and the root's call (in the hop when sync)
        straight = outcome(run, {"ask": False})
        if straight[0] == "value" and run is plan.resolve:
            straight = ("value", straight[1] | {"ask": True})
        assert outcome(run, {"ask": True}, EMPTY, None, answer_one) == straight
        rounds = outcome(run, {"ask": True})
        answers: dict[str, Answer] = {}
        for _ in askers:  # an asker that depends on another is asked in a later round
            if rounds[0] != "needs":
                break
            answers |= {a.key: Answer(a.digest, None) for a in rounds[1].questions}
            rounds = outcome(run, {"ask": True}, EMPTY, answers)
        assert rounds == straight


@settings(max_examples=examples(100), deadline=None)
@given(failing_graphs())
def test_a_step_that_cannot_ask_never_runs_while_a_question_before_it_is_pending(
    case: Case,
) -> None:
    dag, askers, _, keyword, inline, root, plain, concurrent = case
    case = (dag, askers, None, keyword, inline, root, plain, concurrent)  # nothing fails
    namespace: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve, "Carry": Carry, "log": []}
    exec(source_of(case, logged=True), namespace)
    plan = compile_plan(namespace["root"], root_inline=root == "inline")
    position = {int(step.name.removeprefix("f")): step.index for step in plan.steps}
    log: list[int] = namespace["log"]

    asked: list[int] = []

    async def ask(question: Asked) -> Any:
        asked.append(int(question.step.name.removeprefix("f")))
        log.append(-1 - asked[-1])  # where the question was put among the steps
        return None

    anyio.run(plan.run, {"ask": True}, EMPTY, None, ask)
    # Asking mid-call: every step once, each question put once, and a step that cannot ask only
    # after the questions of every step before it; without concurrent steps, exactly in run order.
    assert sorted(n for n in log if n >= 0) == sorted(position)
    assert sorted(-1 - n for n in log if n < 0) == sorted(askers)
    at = {n: i for i, n in enumerate(log)}
    for ran in plain:
        earlier = [a for a in askers if position[a] < position[ran]]
        assert all(at[-1 - a] < at[ran] for a in earlier), "a step that cannot ask ran before an answer"
    if not concurrent:
        expected: list[int] = []
        for step in plan.steps:
            expected += [int(step.name.removeprefix("f"))]
            if int(step.name.removeprefix("f")) in askers:
                expected.append(-1 - int(step.name.removeprefix("f")))
        assert log == expected

    answers: dict[str, Answer] = {}
    for _ in range(len(askers) + 1):
        log.clear()
        result = anyio.run(plan.run, {"ask": True}, EMPTY, answers)
        if not isinstance(result, NeedsInput):
            break
        first_pending = min(position[int(a.step.name.removeprefix("f"))] for a in result.questions)
        for ran in log:
            if ran in plain:
                assert position[ran] < first_pending, "a step that cannot ask ran after a pending question"
        answers |= {a.key: Answer(a.digest, None) for a in result.questions}
    else:
        raise AssertionError("more rounds than questions")
    assert result == anyio.run(plan.run, {"ask": False})


class CleanupBoom(Exception):
    pass


CleanupCase = tuple[Dag, set[int], set[int], Failure, list[bool], Root]


@st.composite
def graphs_with_cleanup(draw: st.DrawFn) -> CleanupCase:
    """Random graphs in which some resolvers are generators (sync or async) that clean up."""
    size, providers, is_async = draw(dags())
    cleanup = draw(st.sets(st.integers(min_value=0, max_value=size - 1), min_size=1))
    askers = draw(st.sets(st.integers(min_value=0, max_value=size - 1), max_size=2)) - cleanup
    kinds: list[list[Failure]] = [
        [None],
        [("root", 0)],
        [("resolver", i) for i in range(size)],
        [("cleanup", i) for i in sorted(cleanup)],
    ]
    failure = draw(st.sampled_from(draw(st.sampled_from(kinds))))
    inline = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    root: Root = draw(st.sampled_from(["async", "sync", "inline"]))
    return (size, providers, is_async), cleanup, askers, failure, inline, root


def cleanup_namespace(log: list[Any]) -> dict[str, Any]:
    """What the sources of cleanup resolvers use."""
    return {
        "Annotated": Annotated,
        "Resolve": Resolve,
        "Carry": Carry,
        "Boom": Boom,
        "CleanupBoom": CleanupBoom,
        "log": log,
    }


def cleanup_source(case: CleanupCase) -> str:
    """f0..f{size-1} and a root; each step logs running, a cleanup one also how its round ended."""
    (size, providers, is_async), cleanup, askers, failure, inline, root = case
    lines: list[str] = []
    for i in range(size):
        params = [f"p{j}: 'Annotated[int, Resolve(f{j}, inline={inline[j]})]'" for j in providers[i]]
        lines.append(f"{'async def' if is_async[i] else 'def'} f{i}({', '.join(['ask: bool', *params])}):")
        lines.append(f"    log.append(('run', {i}))")
        if failure == ("resolver", i):
            lines.append(f"    raise Boom({i})")
        total = " + ".join([str(i), *(f"p{j}" for j in providers[i])])
        lines += value_lines(i, total, cleanup, askers, failure)
    params = ", ".join(f"p{i}: 'Annotated[int, Resolve(f{i}, inline={inline[i]})]'" for i in range(size))
    return "\n".join([*lines, *logged_root(size, params, root, failure)])


def value_lines(i: int, total: str, cleanup: set[int], askers: set[int], failure: Any) -> list[str]:
    """How step `i` gives its value `total`: a cleanup one yields it and logs how its round ended."""
    if i in cleanup:
        lines = [
            "    try:",
            f"        how = yield {total}",
            f"        log.append(('closed', {i}, how))",
            "    except BaseException as error:",
            f"        log.append(('thrown', {i}, type(error).__name__))",
            "        raise",
        ]
        return [*lines, f"    raise CleanupBoom({i})"] if failure == ("cleanup", i) else lines
    if i in askers:
        return [f"    return Carry({total}, {i}) if ask else {total}"]
    return [f"    return {total}"]


def logged_root(size: int, params: str, root: Root, failure: Any) -> list[str]:
    """The root over p0..p{size-1}: logs its run, and fails with the failure `("root", 0)`."""
    lines = [
        f"{'async def' if root == 'async' else 'def'} root(ask: bool, {params}):",
        "    log.append(('root',))",
    ]
    if failure == ("root", 0):
        lines.append("    raise Boom('root')")
    return [*lines, f"    return {' + '.join(['0', *(f'p{i}' for i in range(size))])}"]


def assert_single_rounds_agree(log: list[Any], generated: Any, interpreter: Any, asking: bool) -> None:
    """One round without questions, one with them, and one answering them through the callback
    (`asking`): the same outcome and the same log either way."""
    for ask in (False, True):
        assert logged_outcome(log, generated, {"ask": ask}) == logged_outcome(log, interpreter, {"ask": ask})
    if asking:
        via_callback = logged_outcome(log, generated, {"ask": True}, EMPTY, None, answer_one)
        assert via_callback == logged_outcome(log, interpreter, {"ask": True}, EMPTY, None, answer_one)


def interpreted(plan: Any, collect: bool) -> Any:
    """`plan.run` (or `plan.resolve` with `collect`) as the interpreter alone runs it."""
    from mcpdi.engine._interpret import UNSET, resume

    async def run(arguments: Any, context: Any = EMPTY, answers: Any = None, ask: Any = None) -> Any:
        unset = [UNSET] * len(plan.steps)
        return await resume(plan, collect, arguments, context, answers, ask, 0, unset)

    return run


def logged_outcome(log: list[Any], run: Any, *args: Any) -> tuple[Any, ...]:
    """What a round gave (as `outcome`, with the notes of an error) and what it logged, in order."""
    log.clear()
    try:
        value = anyio.run(run, *args)
    except ResolverError as error:
        notes = getattr(error, "__notes__", [])
        got: tuple[Any, ...] = (type(error).__name__, error.step.name, type(error.__cause__), notes)
    except Exception as error:
        got = ("raised", type(error), getattr(error, "__notes__", []))
    else:
        if isinstance(value, NeedsInput):
            got = ("needs", [(a.key, a.digest) for a in value.questions], dict(value.kept))
        else:
            got = ("value", value)
    return (*got, list(log))


@settings(max_examples=examples(150), deadline=None)
@given(graphs_with_cleanup())
def test_cleanup_rounds_in_generated_code_match_the_interpreter_values_errors_and_cleanup_order(
    case: CleanupCase,
) -> None:
    _, _, askers, _, _, root = case
    log: list[Any] = []
    namespace = cleanup_namespace(log)
    exec(cleanup_source(case), namespace)
    plan = compile_plan(namespace["root"], root_inline=root == "inline")
    assert "entered" in plan.source  # generated, not handed to the interpreter whole

    for generated, interpreter in (
        (plan.run, interpreted(plan, False)),
        (plan.resolve, interpreted(plan, True)),
    ):
        assert_single_rounds_agree(log, generated, interpreter, bool(askers))


CallCase = tuple[Dag, set[int], set[int], Failure, list[bool], Root]


@st.composite
def graphs_with_call_scope(draw: st.DrawFn) -> CallCase:
    """Random graphs in which some resolvers are call-scoped: computed once per call, kept across rounds."""
    size, providers, is_async = draw(dags())
    call = draw(st.sets(st.integers(min_value=0, max_value=size - 1), min_size=1))
    askers = draw(st.sets(st.integers(min_value=0, max_value=size - 1), max_size=2)) - call
    kinds: list[list[Failure]] = [[None], [("root", 0)], [("resolver", i) for i in range(size)]]
    failure = draw(st.sampled_from(draw(st.sampled_from(kinds))))
    inline = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    root: Root = draw(st.sampled_from(["async", "sync", "inline"]))
    return (size, providers, is_async), call, askers, failure, inline, root


def call_scope_source(case: CallCase) -> str:
    (size, providers, is_async), call, askers, failure, inline, root = case

    def marker(j: int) -> str:
        scope = ', scope="call"' if j in call else ""
        return f"'Annotated[int, Resolve(f{j}, inline={inline[j]}{scope})]'"

    lines: list[str] = []
    for i in range(size):
        params = [f"p{j}: {marker(j)}" for j in providers[i]]
        lines.append(f"{'async def' if is_async[i] else 'def'} f{i}({', '.join(['ask: bool', *params])}):")
        lines.append(f"    log.append({i})")
        if failure == ("resolver", i):
            lines.append(f"    raise Boom({i})")
        total = " + ".join([str(i), *(f"p{j}" for j in providers[i])])
        if i in askers:
            lines.append(f"    return Carry({total}, {i}) if ask else {total}")
        else:
            lines.append(f"    return {total}")
    params = ", ".join(f"p{i}: {marker(i)}" for i in range(size))
    lines.append(f"{'async def' if root == 'async' else 'def'} root(ask: bool, {params}):")
    if failure == ("root", 0):
        lines.append("    raise Boom('root')")
    lines.append(f"    return {' + '.join(['0', *(f'p{i}' for i in range(size))])}")
    return "\n".join(lines)


def rounds_of(log: list[Any], run: Any, rounds: int) -> tuple[list[Any], list[Any]]:
    """Up to `rounds` rounds of one call, each answering the questions and keeping the call-scoped
    values the one before gave: what each round gave, and what the whole call logged."""
    from mcpdi.engine._question import KEPT

    log.clear()
    answers: dict[str, Answer] = {}
    gave: list[Any] = []
    for _ in range(rounds):
        try:
            value = anyio.run(run, {"ask": True}, EMPTY, dict(answers))
        except ResolverError as error:
            gave.append(("resolver", error.step.name, type(error.__cause__)))
            break
        except Exception as error:
            gave.append(("raised", type(error)))
            break
        if not isinstance(value, NeedsInput):
            gave.append(("value", value))
            break
        gave.append(("needs", sorted(a.key for a in value.questions), dict(value.kept)))
        answers |= {a.key: Answer(a.digest, None) for a in value.questions}
        answers |= {key: Answer(KEPT, kept) for key, kept in value.kept.items()}
    return gave, list(log)


@settings(max_examples=examples(150), deadline=None)
@given(graphs_with_call_scope())
def test_call_scoped_rounds_in_generated_code_match_the_interpreter_round_after_round(case: CallCase) -> None:
    _, _, askers, _, _, root = case
    log: list[Any] = []
    namespace: dict[str, Any] = {
        "Annotated": Annotated,
        "Resolve": Resolve,
        "Carry": Carry,
        "Boom": Boom,
        "log": log,
    }
    exec(call_scope_source(case), namespace)
    plan = compile_plan(namespace["root"], root_inline=root == "inline")
    assert "_KEPT" in plan.source  # generated, not handed to the interpreter whole

    for generated, interpreter in (
        (plan.run, interpreted(plan, False)),
        (plan.resolve, interpreted(plan, True)),
    ):
        assert rounds_of(log, generated, len(askers) + 2) == rounds_of(log, interpreter, len(askers) + 2)


# The graph, and its concurrent, cleanup, call-scoped, asking and cannot-ask steps; what fails
# (one or two resolvers, an adapter, a cleanup, or a resolver cancelling the call); the root.
ConcurrentCase = tuple[Dag, set[int], set[int], set[int], set[int], set[int], list[Any], list[bool], Root]


def mixed_graphs(*, concurrent_at_least: int, call_at_least: int) -> st.SearchStrategy[ConcurrentCase]:
    """Random graphs with concurrent resolvers, among cleanup, call-scoped and asking ones; at
    least this many concurrent steps, and this many call-scoped steps that use another step.

    Each step uses at most two others, so that concurrent steps next to each other in run
    order are often independent and run together; concurrent steps ask more often than others.
    """

    @st.composite
    def draw_case(draw: st.DrawFn) -> ConcurrentCase:
        size = draw(st.integers(min_value=1 + bool(call_at_least), max_value=10))
        providers = {
            i: sorted(draw(st.sets(st.integers(0, i - 1), max_size=2))) if i else [] for i in range(size)
        }
        nodes = st.integers(min_value=0, max_value=size - 1)
        using: set[int] = set()
        if call_at_least:
            using = draw(st.sets(st.integers(1, size - 1), min_size=call_at_least, max_size=2))
        for i in using:  # the call-scoped steps that must use another one
            providers[i] = providers[i] or [draw(st.integers(0, i - 1))]
        concurrent = draw(st.sets(nodes, min_size=concurrent_at_least)) - using
        is_async = [draw(st.booleans()) or i in concurrent for i in range(size)]
        cleanup = draw(st.sets(nodes, max_size=2)) - concurrent - using
        call = using | (draw(st.sets(nodes, max_size=2)) - concurrent - cleanup)
        asking_concurrent: set[int] = set()
        if concurrent:
            asking_concurrent = draw(st.sets(st.sampled_from(sorted(concurrent)), max_size=3))
        some = draw(st.sets(nodes, min_size=min(call_at_least, 1), max_size=2))  # kept values need questions
        askers = (some | asking_concurrent) - cleanup - call
        plain = draw(st.sets(nodes)) - askers
        edges = [(i, j) for i in range(size) for j in providers[i]]
        kinds: list[list[Any]] = [
            [None],
            [("root", 0)],
            [("resolver", i) for i in range(size)],
            [("resolver", i) for i in sorted(call)],
            [("resolvers", (i, j)) for i in sorted(concurrent) for j in sorted(concurrent) if i < j],
            [("cancel", i) for i in range(size) if is_async[i] and i not in cleanup],
            [("cleanup", i) for i in sorted(cleanup)],
            [("adapter", edge) for edge in edges],
            [("adapter", edge) for edge in edges if edge[0] in call],
        ]
        failures = [draw(st.sampled_from(kind)) for kind in kinds if kind]
        failure = draw(st.sampled_from(failures))
        inline = [draw(st.booleans()) and not is_async[i] for i in range(size)]
        root: Root = draw(st.sampled_from(["async", "sync", "inline"]))
        return (size, providers, is_async), concurrent, cleanup, call, askers, plain, [failure], inline, root

    return draw_case()


def concurrent_source(case: ConcurrentCase) -> str:
    """f0..f{size-1} and a root; each step logs starting and ending, a cleanup one how its round
    ended; an async step lets the others run in between (a checkpoint)."""
    (size, providers, is_async), concurrent, cleanup, call, askers, plain, [failure], inline, root = case
    raising = {failure[1]} if failure and failure[0] == "resolver" else set()
    if failure and failure[0] == "resolvers":
        raising = set(failure[1])

    def marker(j: int) -> str:
        flags = f"inline={inline[j]}, concurrent={j in concurrent}" + (', scope="call"' if j in call else "")
        return f"'Annotated[int, Resolve(f{j}, {flags})]'"

    lines: list[str] = []
    for i in range(size):
        returns = " -> int" if i in plain and i not in cleanup else ""
        params = ", ".join(["ask: bool", *(f"p{j}: {marker(j)}" for j in providers[i])])
        lines.append(f"{'async def' if is_async[i] else 'def'} f{i}({params}){returns}:")
        lines.append(f"    log.append(('run', {i}))")
        if is_async[i]:
            lines.append("    await checkpoint()")
        if failure == ("cancel", i):
            lines += ["    scopes[-1].cancel()", "    await checkpoint()"]
        if i in raising:
            lines.append(f"    raise Boom({i})")
        lines.append(f"    log.append(('end', {i}))")
        total = " + ".join([str(i), *(f"p{j}" for j in providers[i])])
        lines += value_lines(i, total, cleanup, askers, failure)
    params = ", ".join(f"p{i}: {marker(i)}" for i in range(size))
    return "\n".join([*lines, *logged_root(size, params, root, failure)])


def in_a_cancel_scope(run: Any, scopes: list[anyio.CancelScope]) -> Any:
    """`run` in a cancel scope of its own, which a resolver may cancel (`scopes[-1]`)."""

    async def run_in_scope(*args: Any) -> Any:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            return await run(*args)
        return "cancelled"

    return run_in_scope


def assert_generated_rounds_match_the_interpreter(case: ConcurrentCase) -> None:
    """A `mixed_graphs` case in generated code and in the interpreter alone: the same outcome,
    error step, cause, notes and log (steps, adapters, cleanup) for one round without questions,
    one with them, one answering them through the callback, and a call of several rounds that
    keep their call-scoped values, and a round given every call-scoped value as kept; the plan
    is generated, not handed to the interpreter whole."""
    _, concurrent, _, call, askers, _, [failure], _, root = case
    log: list[Any] = []
    scopes: list[anyio.CancelScope] = []
    namespace = cleanup_namespace(log) | {"checkpoint": anyio.lowlevel.checkpoint, "scopes": scopes}
    exec(concurrent_source(case), namespace)

    def shaped(consumer: int, provider: int) -> bool:
        return consumer in call or consumer in concurrent or provider in concurrent

    adapt = adapters(failure, shaped, log)
    plan = compile_plan(namespace["root"], adapt=adapt, root_inline=root == "inline")
    assert "ask, 0, [_UNSET] *" not in plan.source  # generated, not handed to the interpreter whole
    kept = {step.key: Answer.kept(-step.index) for step in plan.steps if step.scope == "call"}

    for generated, interpreter in (
        (plan.run, interpreted(plan, False)),
        (plan.resolve, interpreted(plan, True)),
    ):
        generated, interpreter = in_a_cancel_scope(generated, scopes), in_a_cancel_scope(interpreter, scopes)
        assert_single_rounds_agree(log, generated, interpreter, bool(askers))
        if askers:
            rounds = len(askers) + 2
            assert rounds_of(log, generated, rounds) == rounds_of(log, interpreter, rounds)
        for ask in (False, True) if call else ():  # a later round: kept values, adapters not run
            arguments = {"ask": ask}
            assert logged_outcome(log, generated, arguments, EMPTY, kept) == logged_outcome(
                log, interpreter, arguments, EMPTY, kept
            )


@settings(max_examples=examples(200), deadline=None)
@given(mixed_graphs(concurrent_at_least=1, call_at_least=0))
def test_concurrent_rounds_in_generated_code_match_the_interpreter_values_errors_cleanup_and_order(
    case: ConcurrentCase,
) -> None:
    assert_generated_rounds_match_the_interpreter(case)


@settings(max_examples=examples(200), deadline=None)
@given(mixed_graphs(concurrent_at_least=0, call_at_least=1))
def test_call_scoped_steps_with_adapted_inputs_in_generated_code_match_the_interpreter_round_after_round(
    case: ConcurrentCase,
) -> None:
    _, _, _, call, _, _, _, _, _ = case
    assert call
    assert_generated_rounds_match_the_interpreter(case)
