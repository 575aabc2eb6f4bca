"""Generating one plan's straight-line Python source: the path a round takes when nobody asks."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import copy_context
from dataclasses import dataclass
from typing import Any

from mcpdi.engine._callables import identity_of
from mcpdi.engine._cleanup import (
    STOPPED,
    RoundOutcome,
    cleanup_error,
    close,
    close_one,
    close_shielded,
    enter,
    entered_of,
    failed,
    never_yielded,
    run_inline,
    yielded_again,
)
from mcpdi.engine._offloaded import joins_hop, offload_hop
from mcpdi.engine._plan import Argument, ArgumentBinding, Binding, ContextBinding, ResolvedBinding, Step
from mcpdi.engine._question import KEPT, NeedsInput
from mcpdi.engine._together import batch_from, run_calls


class Names:
    """Constants the generated code refers to, each bound once in its namespace."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.by_id: dict[int, str] = {}

    def bind(self, prefix: str, value: object) -> str:
        name = self.by_id.get(id(value))
        if name is None:
            name = f"_{prefix}{len(self.by_id)}"
            self.by_id[id(value)] = name
            self.namespace[name] = value
        return name


def _call(fn: str, args: list[str], kwargs: list[tuple[str, str]], is_async: bool, inline: bool) -> str:
    listed = ", ".join([*args, *(f"{k}={v}" for k, v in kwargs)])
    if is_async:
        return f"await {fn}({listed})"
    if inline:
        return f"{fn}({listed})"
    if kwargs:
        return f"await _offload(_partial({fn}, {listed}))"
    return f"await _offload({', '.join([fn, *args])})"


def _call_in_hop(fn: str, args: list[str], kwargs: list[tuple[str, str]]) -> str:
    """A call inside a hop: in a copy of the hop's context, as a thread hand-off of its own would."""
    return f"_copy_context().run({', '.join([fn, *args, *(f'{k}={v}' for k, v in kwargs)])})"


class _Writer:
    def __init__(self, names: Names, arguments: tuple[Argument, ...], step_count: int) -> None:
        self.names = names
        self.lines: list[str] = []
        self.argument_var = {a.name: f"a{i}" for i, a in enumerate(arguments)}
        self.context_var: dict[tuple[type, bool], str] = {}
        self.values = ", ".join(f"v{i}" for i in range(step_count))
        self.adapted = 0
        self.in_try = False
        self.segments = 0  # try blocks closed before the last one (adapters and hops split them)
        self.hops: list[str] = []  # the source of the hop functions `run` hands to worker threads
        self.hop_count = 0
        self.cleanup: list[Step] = []  # the round's cleanup resolvers: `hN` holds step N's once entered
        self.batched = False  # concurrent steps run together

    def read_arguments(self, arguments: tuple[Argument, ...]) -> None:
        required = [(i, a) for i, a in enumerate(arguments) if a.required]
        if required:
            self.lines.append("    try:")
            self.lines += [f"        a{i} = arguments[{a.name!r}]" for i, a in required]
            self.lines.append("    except KeyError as error:")
            self.lines.append("        raise _missing_argument(_NAME, error.args[0]) from None")
        for i, a in enumerate(arguments):
            if not a.required:
                self.lines.append(f"    a{i} = arguments.get({a.name!r}, {self.names.bind('d', a.default)})")

    def read_context(self, bindings: list[Binding]) -> None:
        for binding in bindings:
            if not isinstance(binding, ContextBinding):
                continue
            slot = (binding.context_type, binding.optional)
            if slot in self.context_var:
                continue
            var = self.context_var[slot] = f"c{len(self.context_var)}"
            t = self.names.bind("t", binding.context_type)
            if binding.optional:
                self.lines.append(f"    {var} = context.get({t})")
            else:
                self.lines += [
                    "    try:",
                    f"        {var} = context[{t}]",
                    "    except KeyError:",
                    f"        raise _missing_context(_NAME, {t}) from None",
                ]

    def adapt(self, bindings: tuple[Binding, ...]) -> dict[str, str]:
        """Apply the `plain` adapters of these edges, outside any try: their exceptions pass unchanged."""
        adapted: dict[str, str] = {}
        for b in bindings:
            if isinstance(b, ResolvedBinding) and b.adapter is not None and b.adapter.plain is not None:
                if self.in_try:
                    self.close_try()
                var = adapted[b.parameter] = f"x{self.adapted}"
                self.adapted += 1
                self.lines.append(
                    f"    {var} = {self.names.bind('p', b.adapter.plain)}(v{b.edge.provider.index})"
                )
        return adapted

    def expression(self, binding: Binding, adapted: dict[str, str]) -> str:
        if binding.parameter in adapted:
            return adapted[binding.parameter]
        match binding:
            case ArgumentBinding():
                return self.argument_var[binding.argument]
            case ContextBinding():
                return self.context_var[(binding.context_type, binding.optional)]
            case ResolvedBinding():
                return f"v{binding.edge.provider.index}"

    def arguments_of(
        self, bindings: tuple[Binding, ...], adapted: dict[str, str]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """The expressions passed by position, and by keyword (parameter, expression)."""
        args = [self.expression(b, adapted) for b in bindings if b.positional]
        kwargs = [(b.parameter, self.expression(b, adapted)) for b in bindings if not b.positional]
        return args, kwargs

    def call_of(
        self,
        fn: Callable[..., Any],
        bindings: tuple[Binding, ...],
        is_async: bool,
        inline: bool,
        adapted: dict[str, str] | None = None,
    ) -> str:
        if adapted is None:
            adapted = self.adapt(bindings)
        return _call(self.names.bind("f", fn), *self.arguments_of(bindings, adapted), is_async, inline)

    def app_step(self, step: Step) -> None:
        """An app-scoped value: from the scope's cache, computed by `_app_value` on first use."""
        adapted = self.adapt(step.bindings)
        args = ", ".join(self.expression(b, adapted) for b in step.bindings if b.positional)
        kwargs = ", ".join(
            f"{b.parameter!r}: {self.expression(b, adapted)}" for b in step.bindings if not b.positional
        )
        if not self.in_try:
            self.lines.append("    try:")
            self.in_try = True
        key = self.names.bind("k", identity_of(step.fn))
        v = f"v{step.index}"
        self.lines.append(f"        {v} = app.values.get({key}, _UNSET)")
        fill = f"await _app_value(app, _STEPS[{step.index}], [{args}], {{{kwargs}}})"
        self.lines.append(f"        if {v} is _UNSET: {v} = {fill}")

    def enter_step(self, step: Step) -> list[str]:
        """A cleanup resolver's value, entered as the interpreter enters it; `hN`: its `Entered`."""
        args, kwargs = self.arguments_of(step.bindings, self.adapt(step.bindings))
        listed = ", ".join(f"{k!r}: {v}" for k, v in kwargs)
        run_sync = "_run_inline" if step.inline else "_offload"
        i = step.index
        entering = f"await _enter(_STEPS[{i}], [{', '.join(args)}], {{{listed}}}, {run_sync})"
        return [f"        v{i}, h{i} = {entering}"]

    def enter_async_generator(self, step: Step) -> list[str]:
        """`enter_step` written out for the commonest kind, an async generator: what `enter` does;
        `hN`: the generator, set once it yielded its value."""
        args, kwargs = self.arguments_of(step.bindings, self.adapt(step.bindings))
        v, i = f"v{step.index}", step.index
        listed = ", ".join([*args, *(f"{k}={x}" for k, x in kwargs)])
        return [
            f"        g{i} = {self.names.bind('f', step.fn)}({listed})",
            "        try:",
            f"            {v} = await g{i}.__anext__()",
            "        except StopAsyncIteration:",
            f"            {v} = _STOPPED",
            f"        if {v} is _STOPPED: {v} = _UNSET; raise _never_yielded(_STEPS[{i}])",
            f"        h{i} = g{i}",
        ]

    def call_scoped(self, step: Step) -> list[str]:
        """A call-scoped value: the one an earlier round of the call kept, else computed (only
        steps without plain adapters on their inputs come here; `kept_or_adapted` writes the
        others). A call-scoped step never asks: a kept value is a value."""
        v, i = f"v{step.index}", step.index
        call = self.call_of(step.fn, step.bindings, step.is_async, step.inline)
        return [
            f"        k{i} = answers.get({step.key!r}) if answers else None",
            f"        if k{i} is not None and k{i}.digest == _KEPT: {v} = k{i}.payload",
            f"        else: {v} = {call}",
        ]

    def kept_or_adapted(self, step: Step) -> None:
        """A call-scoped value whose inputs are adapted, outside the shared try: a kept value
        is used as is, and its inputs' adapters do not run; else they run (their exceptions
        pass unchanged) and the step is computed in a try of its own."""
        if self.in_try:
            self.close_try()
        v, i = f"v{step.index}", step.index
        self.lines += [
            f"    k{i} = answers.get({step.key!r}) if answers else None",
            f"    if k{i} is not None and k{i}.digest == _KEPT:",
            f"        {v} = k{i}.payload",
            "    else:",
        ]
        computing = len(self.lines)
        call = self.call_of(step.fn, step.bindings, step.is_async, step.inline)
        self.lines += ["    try:", f"        {v} = {call}", *self.error_handler()]
        self.lines[computing:] = ["    " + line for line in self.lines[computing:]]

    def step(self, step: Step) -> None:
        if step.scope == "app":
            self.app_step(step)
            return
        if step.scope == "call" and _adapted(step):
            self.kept_or_adapted(step)
            return
        if step.scope == "call":
            body = self.call_scoped(step)
        elif step.cleanup == "async_generator":
            body = self.enter_async_generator(step)
        elif step.cleanup is not None:
            body = self.enter_step(step)
        else:
            body = [
                f"        v{step.index} = {self.call_of(step.fn, step.bindings, step.is_async, step.inline)}"
            ]
        if not self.in_try:
            self.lines.append("    try:")
            self.in_try = True
        self.lines += body
        if step.may_ask:
            self.lines.append(f"        if isinstance(v{step.index}, _Question): raise _Bail({step.index})")

    def hop(self, steps: list[Step], root: _Root | None) -> None:
        """Hand `steps` (and `root`) to one worker thread, outside any try: the hop names a
        failing resolver itself, so its `ResolverError` must not be wrapped again."""
        if self.in_try:
            self.close_try()
        name = f"_hop{self.hop_count}"
        self.hop_count += 1
        writer = _HopWriter(self, steps, root)
        parameters = ", ".join(["check_cancelled", *(["collect"] if root else []), *writer.inputs])
        self.hops += [f"def {name}({parameters}):", *writer.body(steps, root)]
        targets = [f"v{s.index}" for s in steps] + (["result"] if root else [])
        arguments = ", ".join([name, *(["collect"] if root else []), *writer.inputs])
        self.lines.append(f"    {', '.join(targets)} = await _offload_hop({arguments})")
        for step in steps:
            if step.may_ask:
                hand_over = self.hand_over(str(step.index))
                self.lines.append(f"    if isinstance(v{step.index}, _Question): {hand_over}")

    def together(self, steps: list[Step]) -> None:
        """Run `steps` at the same time, outside any try (`_run_together` names a failing
        resolver itself), their adapters applied before any runs; then each is checked for a
        question in run order, handed to `_resume` with the values of the members after it."""
        if self.in_try:
            self.close_try()
        self.batched = True
        calls: list[str] = []
        for step in steps:
            args, kwargs = self.arguments_of(step.bindings, self.adapt(step.bindings))
            listed = ", ".join(f"{k!r}: {v}" for k, v in kwargs)
            calls.append(f"(_STEPS[{step.index}], [{', '.join(args)}], {{{listed}}})")
        targets = ", ".join(f"v{s.index}" for s in steps)
        self.lines.append(f"    {targets} = await _run_together(({', '.join(calls)}), _step_error)")
        for at, step in enumerate(steps):
            if step.may_ask:
                later = ", ".join(f"{s.index}: v{s.index}" for s in steps[at + 1 :])
                hand_over = self.hand_over(str(step.index), f"{{{later}}}" if later else None)
                self.lines.append(f"    if isinstance(v{step.index}, _Question): {hand_over}")

    def close_try(self) -> None:
        """End a try block; a question hands over to `_resume` outside the handler, so that
        exceptions raised while finishing the round do not chain to the internal `_Bail`."""
        self.in_try = False
        self.segments += 1
        self.lines += self.handlers()
        self.lines.append(f"    if at >= 0: {self.hand_over()}")

    def handlers(self) -> list[str]:
        return ["    except _Bail as bail:", "        at = bail.args[0]", *self.error_handler()]

    def error_handler(self) -> list[str]:
        """A resolver's exception as `ResolverError`: the failed step is the first without a value."""
        return [
            "    except Exception as error:",
            f"        raise _resolver_error(_STEPS, [{self.values}], error) from error",
        ]

    def hand_over(self, at: str = "at", ready: str | None = None) -> str:
        """The statements returning `_resume` from `at`, on one line; `ready`: the source of a
        dict of the values of the concurrent steps after `at` that ran together with it. The
        cleanup resolvers entered go with the round: `_resume` closes them when it ends."""
        entered = handing = ""
        if self.cleanup:
            handles = " = ".join(f"h{s.index}" for s in self.cleanup)
            handing = f"entered = {self.entered()}; {handles} = None; "
            entered = ", entered"
        ready = f", ready={ready}" if ready else ""
        return (
            f"{handing}return await _resume(_PLAN, collect, arguments, context, answers, ask, {at}, "
            f"[{self.values}]{entered}{ready})"
        )

    def entered(self) -> str:
        """The source of the list of the cleanup resolvers entered so far, in the order entered."""
        handles = ", ".join(f"h{s.index}" for s in self.cleanup) + ("," if len(self.cleanup) == 1 else "")
        return f"_entered_of(_CLEANUPS, ({handles}), _offload)"


@dataclass(frozen=True, slots=True)
class _Root:
    """The root's call, for a hop that ends with it."""

    fn: Callable[..., Any]
    bindings: tuple[Binding, ...]


class _HopWriter(_Writer):
    """The body of one hop: a sync function run on a worker thread, returning its steps' values.

    Each resolver runs in a copy of the hop's context after a cancellation check, and the
    hop returns as soon as one returns a question (the later values unset, the root not run).
    """

    def __init__(self, outer: _Writer, steps: list[Step], root: _Root | None) -> None:
        super().__init__(outer.names, (), 0)
        self.argument_var = outer.argument_var  # the hop reads the variables of `run` it is passed
        self.context_var = outer.context_var
        self.first = steps[0].index
        self.after = steps[-1].index + 1
        self.values = ", ".join(f"v{s.index}" for s in steps)
        self.returned = self.values + (", _UNSET" if root is not None else "")
        self.started = False
        self.inputs = self.inputs_of(
            [*(b for s in steps for b in s.bindings), *(root.bindings if root else ())]
        )

    def inputs_of(self, bindings: list[Binding]) -> list[str]:
        """The variables of `run` the hop reads, in the order its steps first read them."""
        inputs: dict[str, None] = {}
        for binding in bindings:
            if isinstance(binding, ResolvedBinding) and binding.edge.provider.index >= self.first:
                continue
            inputs[self.expression(binding, {})] = None
        return list(inputs)

    def body(self, steps: list[Step], root: _Root | None) -> list[str]:
        self.lines.append(f"    {' = '.join(f'v{s.index}' for s in steps)} = _UNSET")
        for step in steps:
            self.step(step)
        if self.in_try:
            self.close_try()
        if root is None:
            self.lines.append(f"    return {self.values}")
            return self.lines
        self.lines.append(f"    if collect: return {self.returned}")
        arguments = self.arguments_of(root.bindings, self.adapt(root.bindings))
        self.lines.append("    check_cancelled()")
        call = _call_in_hop(self.names.bind("f", root.fn), *arguments)
        self.lines.append(f"    return {self.values}, {call}")
        return self.lines

    def step(self, step: Step) -> None:
        arguments = self.arguments_of(step.bindings, self.adapt(step.bindings))
        if not self.in_try:
            self.lines.append("    try:")
            self.in_try = True
        if self.started:  # the first step's cancellation check is the thread hand-off's
            self.lines.append("        check_cancelled()")
        self.started = True
        call = _call_in_hop(self.names.bind("f", step.fn), *arguments)
        self.lines.append(f"        v{step.index} = {call}")
        if step.may_ask:
            self.lines.append(f"        if isinstance(v{step.index}, _Question): return {self.returned}")

    def close_try(self) -> None:
        self.in_try = False
        self.lines += self.handlers()

    def handlers(self) -> list[str]:
        steps = f"_STEPS[{self.first}:{self.after}]"
        return [
            "    except Exception as error:",
            f"        raise _resolver_error({steps}, [{self.values}], error) from error",
        ]


_NOT_RUN = object()


def _groups(steps: tuple[Step, ...]) -> list[list[Step]]:
    """The steps in run order, grouped: consecutive ones that join hops, concurrent ones that
    run together (the batches the interpreter forms when no question is pending), every other
    one alone."""
    groups: list[list[Step]] = []
    not_run = [_NOT_RUN] * len(steps)
    at = 0
    while at < len(steps):
        step = steps[at]
        if groups and joins_hop(step) and joins_hop(groups[-1][-1]):
            groups[-1].append(step)
        elif step.concurrent:
            groups.append(batch_from(steps, at, not_run, (), _NOT_RUN, pending=False))
        else:
            groups.append([step])
        at = groups[-1][-1].index + 1
    return groups


def generate(
    *,
    root: Callable[..., Any],
    root_is_async: bool,
    root_inline: bool,
    arguments: tuple[Argument, ...],
    root_bindings: tuple[Binding, ...],
    steps: tuple[Step, ...],
    names: Names,
) -> str:
    """Source of `async def run(arguments, context, answers, ask, collect=False)` for one plan.

    Each argument is read from the mapping once, each resolver called once, positionally where
    its signature allows, all in one try block (free in Python 3.11 until something raises).
    After each call one isinstance check hands a question to `_resume`, which finishes the same
    round with the values computed so far; a failing resolver is the first one without a value.
    Consecutive offloaded sync resolvers, and a sync root after them, run in one function
    handed to a worker thread (a hop, `_hopN` before `run` in the source). Concurrent
    resolvers that the interpreter would run together run together, in one task group. A
    call-scoped resolver with adapted inputs takes its kept value before the adapters run.
    `collect=True` returns the root's parameter values instead of calling it.
    """
    writer = _Writer(names, arguments, len(steps))
    lines = writer.lines
    writer.cleanup = [s for s in steps if s.cleanup is not None and s.scope == "round"]
    lines.append("async def run(arguments, context=_EMPTY, answers=None, ask=None, collect=False):")
    writer.read_arguments(arguments)
    writer.read_context([*(b for s in steps for b in s.bindings), *root_bindings])
    if any(step.scope == "app" for step in steps):
        lines += [
            "    try:",
            "        app = context[_AppScope]",
            "    except KeyError:",
            "        raise _missing_context(_NAME, _AppScope) from None",
        ]
    if steps:
        lines.append(f"    {' = '.join(f'v{i}' for i in range(len(steps)))} = _UNSET")
    init_at = len(lines)
    joined = False  # the root runs in the last hop
    for group in _groups(steps):
        with_root = not root_is_async and not root_inline and group[-1] is steps[-1]
        if group[0].concurrent and len(group) > 1:
            writer.together(group)
        elif joins_hop(group[0]) and (len(group) > 1 or with_root):
            writer.hop(group, _Root(root, root_bindings) if with_root else None)
            joined = with_root
        else:
            writer.step(group[0])
    last_try = writer.in_try
    if last_try:
        # The last try block ends in `else:` with the tail, so the path without questions pays
        # for no flag check (but with cleanup resolvers: the tail does not return, it goes on
        # to close them); a question falls through to `_resume` after the handler.
        writer.in_try = False
        lines += [*writer.handlers(), "    else:"]
    tail_start = len(lines)
    adapted = writer.adapt(root_bindings)
    items = ", ".join(f"{b.parameter!r}: {writer.expression(b, adapted)}" for b in root_bindings)
    call = "result" if joined else writer.call_of(root, root_bindings, root_is_async, root_inline, adapted)
    if not writer.cleanup:
        lines += [f"    if collect: return {{{items}}}", f"    return {call}"]
    elif joined:
        lines.append(f"    if collect: result = {{{items}}}")
    else:  # the round's value, returned once its cleanup resolvers are closed
        lines += [f"    if collect: result = {{{items}}}", f"    else: result = {call}"]
    if last_try:
        lines[tail_start:] = ["    " + line for line in lines[tail_start:]]
        lines.append(f"    {'if at >= 0: ' if writer.cleanup else ''}{writer.hand_over()}")
    if writer.cleanup:
        lines[init_at:] = _closing(writer, lines[init_at:])
    if writer.segments or (writer.cleanup and last_try):
        lines.insert(init_at, "    at = -1")
    if writer.hops:
        names.namespace.update(_offload_hop=offload_hop, _copy_context=copy_context)
    if writer.batched:
        names.namespace["_run_together"] = run_calls
    if any(s.scope == "call" for s in steps):
        names.namespace["_KEPT"] = KEPT
    if writer.cleanup:
        names.namespace.update(
            _CLEANUPS=tuple(writer.cleanup),
            _enter=enter,
            _entered_of=entered_of,
            _STOPPED=STOPPED,
            _never_yielded=never_yielded,
            _run_inline=run_inline,
            _close=close,
            _close_one=close_one,
            _close_shielded=close_shielded,
            _failed=failed,
            _yielded_again=yielded_again,
            _cleanup_error=cleanup_error,
            _COMPLETED=RoundOutcome.COMPLETED,
            _SUSPENDED=RoundOutcome.SUSPENDED,
            _NeedsInput=NeedsInput,
        )
    return "\n".join([*writer.hops, *lines]) + "\n"


def _adapted(step: Step) -> bool:
    """Whether a plain adapter shapes one of `step`'s inputs."""
    return any(
        isinstance(b, ResolvedBinding) and b.adapter is not None and b.adapter.plain is not None
        for b in step.bindings
    )


def _closing(writer: _Writer, body: list[str]) -> list[str]:
    """The round's `body` (from its first step on) in a try that closes the cleanup resolvers
    entered however the round ends, as the interpreter's `resume` does (which closes them
    itself once the round is handed over: the handles are cleared then).

    A round that completes here entered every one of them; each is closed in turn, last
    entered first, its outcome sent in (written out for async generators).
    """
    handles = " = ".join(f"h{s.index}" for s in writer.cleanup)
    lines = [f"    {handles} = None", "    try:", *("    " + line for line in body)]
    lines += [
        "    except Exception as error:",
        f"        entered = {writer.entered()}",
        "        if entered: await _close(entered, error, _COMPLETED)",
        "        raise",
        "    except BaseException as error:",
        f"        entered = {writer.entered()}",
        "        if entered: await _close_shielded(entered, error)",
        "        raise",
        "    outcome = _SUSPENDED if isinstance(result, _NeedsInput) else _COMPLETED",
        "    failures = None",
    ]
    for step in reversed(writer.cleanup):
        h, i = f"h{step.index}", step.index
        if step.cleanup == "async_generator":
            lines += [
                "    try:",
                f"        await {h}.asend(outcome)",
                "    except StopAsyncIteration:",
                "        pass",
                "    except Exception as failure:",
                f"        failures = _failed(failures, _STEPS[{i}], failure)",
                "    else:",
                f"        failures = await _yielded_again(failures, _STEPS[{i}], {h})",
            ]
        else:
            lines += [
                "    try:",
                f"        await _close_one({h}, None, outcome)",
                "    except Exception as failure:",
                f"        failures = _failed(failures, _STEPS[{i}], failure)",
            ]
    lines += [
        "    if failures is not None: raise _cleanup_error(failures) from failures[0][1]",
        "    return result",
    ]
    return lines
