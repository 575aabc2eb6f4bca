"""`compile_plan`: from a function to a frozen plan with generated run code."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import linecache
import threading
from collections.abc import Callable, Collection, Hashable, Mapping
from types import CodeType, FunctionType
from typing import Any, cast

from mcpdi.engine._analyse import (
    POSITIONAL,
    ArgumentParam,
    ContextParam,
    Node,
    Param,
    ResolvedParam,
    analyse,
)
from mcpdi.engine._callables import display_name, identity_of
from mcpdi.engine._errors import InvalidSignature
from mcpdi.engine._graph import run_order
from mcpdi.engine._interpret import (
    UNSET,
    Bail,
    app_value,
    failed_step_error,
    missing_argument,
    missing_context,
    offload,
    resolver_error,
    resume,
)
from mcpdi.engine._plan import (
    EMPTY_CONTEXT,
    Adapter,
    Argument,
    AskCallback,
    Binding,
    ContextBinding,
    Edge,
    Plan,
    ResolvedBinding,
    RunFunction,
    Step,
)
from mcpdi.engine._question import Answer, Question
from mcpdi.engine._scopes import AppScope
from mcpdi.engine._shared import shared_argument, shared_argument_binding, shared_arguments, shared_bindings


def wire_key(plan_name: str, qualname: str, ordinal: int) -> str:
    """An opaque, stable key: the same code gives the same key in every process, names stay hidden."""
    return "r" + hashlib.sha256(f"{plan_name}\0{qualname}\0{ordinal}".encode()).hexdigest()[:10]


def returned_type(fn: Callable[..., Any], hints: Mapping[str, Any]) -> Any:
    """What a resolver gives: a class gives its instances, a function its return hint (`Any` if none)."""
    return fn if isinstance(fn, type) else hints.get("return", Any)


def may_ask(fn: Callable[..., Any], hints: Mapping[str, Any]) -> bool:
    """Whether a resolver's result needs the question check on every call.

    Only a return annotation naming a concrete class outside the `Question` family rules a
    question out (a class resolver returns its own instances); a type checker holds the
    resolver to it. Unions, generics, `Any`, `object` and missing annotations keep the check.
    """
    returned = fn if isinstance(fn, type) else hints.get("return")
    if not isinstance(returned, type) or returned in (object, Any):  # Any is a class since 3.11
        return True
    return issubclass(returned, Question)


def _asks(node: Node) -> bool:
    """Whether a resolver may return a question; a cleanup resolver's value is injected as is."""
    if node.scope != "round":
        return False  # a kept value is a value: a question cannot be kept for later calls or rounds
    return node.info.cleanup is None and may_ask(node.info.fn, node.info.hints)


def compile_plan(
    fn: Callable[..., Any],
    *,
    context_types: Collection[type] = (),
    adapt: Callable[[Edge], Adapter | None] | None = None,
    localns: Mapping[str, Any] | None = None,
    name: str | None = None,
    root_inline: bool | None = None,
    substitutes: Mapping[Callable[..., Any], Callable[..., Any]] | None = None,
) -> Plan:
    """Read `fn` and every resolver it reaches once, and compile them into a `Plan`.

    Raises `InvalidSignature` for anything that could only fail later, while a call runs.
    `root_inline=None` awaits an async root and runs a sync one on a worker thread.
    `substitutes` maps a resolver to the one compiled in its place wherever it is named (a
    test's override); the substitute's signature is read and checked like any resolver's.
    """
    if not callable(fn):
        msg = (
            f"compile_plan needs a callable, got {fn!r} (of type {type(fn).__name__}); "
            "pass the function to compile."
        )
        raise InvalidSignature(msg, function=fn)
    plan_name = name or str(getattr(fn, "__qualname__", None) or display_name(fn))
    by_identity = {identity_of(old): new for old, new in (substitutes or {}).items()}
    analysis = analyse(
        fn,
        name=plan_name,
        inline=bool(root_inline),
        context_types=context_types,
        localns=localns,
        substitutes=by_identity,
    )
    ordered = run_order(analysis)
    steps: dict[Hashable, Step] = {}
    seen: dict[str, int] = {}

    def bindings_of(node: Node, consumer_key: str | None) -> tuple[Binding, ...]:
        # Equal argument bindings (and tuples of them only) are one object, in this plan and others.
        bindings = [_binding(param, node, consumer_key, steps, adapt) for param in node.params]
        return shared_bindings(tuple(bindings))

    for index, node in enumerate(ordered):
        ordinal = seen.get(node.info.qualname, 0)
        seen[node.info.qualname] = ordinal + 1
        key = wire_key(plan_name, node.info.qualname, ordinal)
        steps[node.identity] = Step(
            index=index,
            key=key,
            name=node.info.name,
            qualname=node.info.qualname,
            location=node.info.location,
            fn=node.info.fn,
            is_async=node.info.is_async,
            inline=node.inline,
            bindings=bindings_of(node, key),
            first_consumer=node.first_consumer,
            may_ask=_asks(node),
            cleanup=node.info.cleanup,
            scope=node.scope,
            concurrent=node.concurrent,
            hints=node.info.hints,
            returns=returned_type(node.info.fn, node.info.hints),
        )
    root = analysis.root
    root_bindings = bindings_of(root, None)
    arguments = shared_arguments(
        tuple(
            shared_argument(p.parameter.name, p.hint, p.parameter.default, p.parameter.kind)
            for p in root.params
            if isinstance(p, ArgumentParam)
        )
    )
    inline = bool(root_inline) and not root.info.is_async
    info = root.info
    return _build(
        plan_name,
        info.fn,
        info.is_async,
        info.location,
        inline,
        arguments,
        root_bindings,
        tuple(steps.values()),
        info.hints,
    )


def _binding(
    param: Param,
    consumer: Node,
    consumer_key: str | None,
    steps: Mapping[Hashable, Step],
    adapt: Callable[[Edge], Adapter | None] | None,
) -> Binding:
    parameter = param.parameter
    positional = parameter.kind in POSITIONAL
    match param:
        case ArgumentParam():
            return shared_argument_binding(parameter.name, positional, parameter.name)
        case ContextParam():
            return ContextBinding(parameter.name, positional, param.context_type, param.optional)
        case ResolvedParam():
            edge = Edge(
                consumer=consumer.info.name,
                consumer_key=consumer_key,
                parameter=parameter.name,
                annotation=param.annotation,
                metadata=param.metadata,
                provider=steps[identity_of(param.provider.fn)],  # providers come first in run order
                validate=param.provider.validate,
            )
            return ResolvedBinding(
                parameter.name, positional, edge, adapt(edge) if adapt is not None else None
            )


_CODE_CACHE: dict[str, CodeType] = {}
_CODE_CACHE_SIZE = 512


def _compiled(source: str) -> CodeType:
    """Compile generated source, reusing the code of plans with the same shape (names are constants)."""
    code = _CODE_CACHE.get(source)
    if code is None:
        if len(_CODE_CACHE) >= _CODE_CACHE_SIZE:
            del _CODE_CACHE[next(iter(_CODE_CACHE))]
        code = _CODE_CACHE[source] = compile(source, "<mcpdi plan>", "exec")
    return code


def _register_source(plan_name: str, source: str) -> str:
    """A file name of the plan's own, with its source in `linecache`: tracebacks, pdb and
    profilers show the generated lines under the plan's name. Plans of one name and one
    source share the entry; another source under a taken name gets a numbered one."""
    lines = source.splitlines(keepends=True)
    for number in range(1, len(linecache.cache) + 2):  # one more than could be taken
        filename = f"<mcpdi plan {plan_name}>" if number == 1 else f"<mcpdi plan {plan_name} #{number}>"
        entry = linecache.cache.get(filename)
        if entry is None or (len(entry) == 4 and entry[2] == lines):
            # mtime None: `linecache.checkcache` keeps the entry, as for sources without a file.
            linecache.cache[filename] = (len(source), None, lines, filename)
            return filename
    msg = "unreachable: a free file name exists"
    raise AssertionError(msg)


def _named(run: Any, plan_name: str, filename: str) -> Any:
    """The generated `run`, its code renamed after the plan (the shared code object stays as is).

    The hop functions defined with it (`_hopN`) are renamed `<plan>._hopN` in the same file.
    """
    generated = run.__code__.co_filename
    for name, value in run.__globals__.items():
        code = getattr(value, "__code__", None)
        if name.startswith("_hop") and code is not None and code.co_filename == generated:
            hop_name = f"{plan_name}.{name}"
            value.__code__ = code.replace(co_filename=filename, co_name=hop_name, co_qualname=hop_name)
    run.__code__ = run.__code__.replace(co_filename=filename, co_name=plan_name, co_qualname=plan_name)
    run.__name__ = run.__qualname__ = plan_name
    return run


def instrument_plan(plan: Plan, wrap: Callable[[Step], Callable[..., Any]]) -> Plan:
    """`plan` with each resolver replaced by `wrap(step)`: same order, same semantics, e.g. traced.

    `wrap` must return a callable of the same kind (a coroutine function for an async step)
    taking the same arguments; the generated code and the interpreter both call it.
    """
    steps = tuple(dataclasses.replace(step, fn=wrap(step)) for step in plan.steps)
    return _build(
        plan.name,
        plan.fn,
        plan.is_async,
        plan.location,
        plan.inline,
        plan.arguments,
        plan.bindings,
        steps,
        plan.hints,
    )


def _build(
    plan_name: str,
    root_fn: Callable[..., Any],
    root_is_async: bool,
    root_location: str,
    inline: bool,
    arguments: tuple[Argument, ...],
    root_bindings: tuple[Binding, ...],
    steps: tuple[Step, ...],
    hints: Mapping[str, Any],
) -> Plan:
    # The run code is generated on the first run (compile has already refused what it would
    # refuse): `run` starts as `_first_run` in the plan's own namespace, and generating gives
    # that same function object the generated code, so a `run` kept by a host runs it too.
    # `resolve` is a second function of the same code whose `collect` defaults to True: one
    # object per plan where a `partial` of `run` would keep two for as long as the plan lives.
    namespace: dict[str, Any] = {"_generate_run": _generate_run}
    run = _run_function(namespace, plan_name, collect=False)
    resolve = _run_function(namespace, plan_name, collect=True)
    plan = Plan(
        name=plan_name,
        fn=root_fn,
        is_async=root_is_async,
        inline=inline,
        location=root_location,
        arguments=arguments,
        context_params=tuple(b for b in root_bindings if isinstance(b, ContextBinding)),
        resolved_params=tuple(b for b in root_bindings if isinstance(b, ResolvedBinding)),
        bindings=root_bindings,
        steps=steps,
        # The generated functions match RunFunction by construction.
        run=cast("RunFunction", run),
        resolve=cast("RunFunction", resolve),
        _namespace=namespace,
        hints=hints,
    )
    namespace["_PLAN"] = plan
    return plan


def _run_function(namespace: dict[str, Any], plan_name: str, *, collect: bool) -> FunctionType:
    """`_first_run` with the plan's namespace as its globals (and `collect` as its default)."""
    run = FunctionType(_first_run.__code__, namespace, plan_name, _COLLECTING if collect else _RUNNING)
    run.__qualname__ = plan_name
    return run


# The defaults of `run` and `resolve`, shared by every plan's.
_RUNNING = (EMPTY_CONTEXT, None, None, False)
_COLLECTING = (EMPTY_CONTEXT, None, None, True)


async def _first_run(
    arguments: Mapping[str, Any],
    context: Mapping[type, Any] = EMPTY_CONTEXT,
    answers: Mapping[str, Answer] | None = None,
    ask: AskCallback | None = None,
    collect: bool = False,
) -> Any:
    """A plan's `run` (or `resolve`) until its first call (runs with the plan's namespace as globals)."""
    run = _generate_run(globals()["_PLAN"])  # its globals: the namespace of its plan
    return await run(arguments, context, answers, ask, collect)


def _generate_run(plan: Plan) -> Any:
    """Generate `plan`'s run code once, into its namespace and its `run` and `resolve`; return `run`."""
    run: Any = plan.run
    namespace: dict[str, Any] = run.__globals__
    if "_SOURCE" not in namespace:
        with _GENERATING:  # first runs on two threads: one generates, the other waits for it
            if "_SOURCE" not in namespace:
                _generate_into(plan, run, namespace)
    return run


_GENERATING = threading.Lock()


def _generate_into(plan: Plan, run: Any, namespace: dict[str, Any]) -> None:
    from mcpdi.engine._codegen import Names, generate

    namespace.update(
        _EMPTY=EMPTY_CONTEXT,
        _NAME=plan.name,
        _UNSET=UNSET,
        _Question=Question,
        _resume=resume,
        _offload=offload,
        _partial=functools.partial,
        _resolver_error=failed_step_error,
        _step_error=resolver_error,
        _Bail=Bail,
        _STEPS=plan.steps,
        _missing_argument=missing_argument,
        _missing_context=missing_context,
        _AppScope=AppScope,
        _app_value=app_value,
    )
    names = Names(namespace)
    source = generate(
        root=plan.fn,
        root_is_async=plan.is_async,
        root_inline=plan.inline,
        arguments=plan.arguments,
        root_bindings=plan.bindings,
        steps=plan.steps,
        names=names,
    )
    exec(_compiled(source), namespace)
    generated = _named(namespace.pop("run"), plan.name, _register_source(plan.name, source))
    run.__code__ = generated.__code__
    resolve: Any = plan.resolve
    resolve.__code__ = generated.__code__
    namespace["_SOURCE"] = source
