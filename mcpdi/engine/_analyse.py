"""Classifying every parameter of the root and of each resolver it reaches, depth-first."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcpdi.engine._annotations import (
    Marked,
    annotated_class,
    context_type_of,
    marked_by,
    misplaced_marker,
    top_level_markers,
)
from mcpdi.engine._callables import (
    CallableInfo,
    describe,
    display_name,
    identity_of,
    working_directory,
)
from mcpdi.engine._errors import InvalidSignature
from mcpdi.engine._records import built_fast
from mcpdi.engine._resolve import Resolve
from mcpdi.engine._scopes import Scope

_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@built_fast
@dataclass(frozen=True, slots=True)
class ArgumentParam:
    """A parameter filled from the call argument of its name."""

    parameter: inspect.Parameter
    hint: Any


@built_fast
@dataclass(frozen=True, slots=True)
class ContextParam:
    """A parameter filled from the context, by a declared context type."""

    parameter: inspect.Parameter
    hint: Any
    context_type: type
    optional: bool


@built_fast
@dataclass(frozen=True, slots=True)
class ResolvedParam:
    """A parameter filled by a resolver (a dependency is named by its marker, before steps exist)."""

    parameter: inspect.Parameter
    hint: Any
    provider: Resolve
    annotation: Any  # T of Annotated[T, Resolve(fn)]
    metadata: tuple[Any, ...]  # the other Annotated extras


Param = ArgumentParam | ContextParam | ResolvedParam


@dataclass(slots=True)
class Node:
    """A function in the graph: the root or a resolver."""

    identity: Hashable
    info: CallableInfo
    inline: bool
    first_consumer: str  # the parameter through which it was first reached
    scope: Scope = "round"
    concurrent: bool = False
    reached_from: Node | None = None  # the consumer that first reached it (None: the root)
    params: list[Param] = field(default_factory=lambda: [])
    preorder: int = 0
    postorder: int = 0

    @property
    def inline_from(self) -> str:
        """ "parameter 'p' of 'owner'": where the flags of the resolver were decided (for errors)."""
        return _where(self.first_consumer, self.reached_from)

    @property
    def path(self) -> tuple[str, ...]:
        """How the root reaches it: "order_book(db)", "pool(settings)", ... (for errors)."""
        consumer = self.reached_from
        if consumer is None:
            return ()
        return (*consumer.path, f"{consumer.info.name}({self.first_consumer})")


def _where(parameter: str, consumer: Node | None) -> str:
    return f"parameter {parameter!r} of {consumer.info.name!r}" if consumer is not None else ""


@dataclass(slots=True)
class Analysis:
    root: Node
    nodes: dict[Hashable, Node]  # resolvers by identity, in first-visit order
    edges: list[tuple[Hashable, Hashable]]  # consumer -> provider
    argument_names: tuple[str, ...]


class _Analyser:
    def __init__(
        self,
        context_types: Collection[type],
        localns: Mapping[str, Any] | None,
        substitutes: Mapping[Hashable, Callable[..., Any]],
    ) -> None:
        self.context_types = tuple(context_types)
        self.localns = localns
        self.substitutes = substitutes
        self.nodes: dict[Hashable, Node] = {}
        self.edges: list[tuple[Hashable, Hashable]] = []
        self.argument_names: tuple[str, ...] = ()
        self.visits = 0
        self.finished = 0
        self.root_identity: Hashable = None
        self.below = working_directory()

    def analyse_root(self, fn: Callable[..., Any], name: str, inline: bool) -> Analysis:
        info = describe(fn, role="Function", localns=self.localns, below=self.below)
        info = CallableInfo(
            info.fn,
            name,
            info.qualname,
            info.location,
            info.is_async,
            info.parameters,
            info.hints,
            info.cleanup,
        )
        root = Node(identity_of(fn), info, inline, "")
        self.root_identity = root.identity
        self.nodes[root.identity] = root
        root.params = [self.classify(info, p, "Function", root_arguments=None) for p in info.parameters]
        self.argument_names = tuple(p.parameter.name for p in root.params if isinstance(p, ArgumentParam))
        root.preorder = self.visits
        self.visits += 1
        for param in root.params:
            if isinstance(param, ResolvedParam):
                self.visit(root, param)
        del self.nodes[root.identity]
        return Analysis(root, self.nodes, self.edges, self.argument_names)

    def visit(self, consumer: Node, param: ResolvedParam) -> None:
        marker = param.provider
        fn: Any = marker.fn
        inline = marker.inline
        identity = identity_of(fn)
        self.edges.append((consumer.identity, identity))
        known = self.nodes.get(identity)
        if known is not None:
            where = _where(param.parameter.name, consumer)
            # inline only matters for sync resolvers; the root is not a resolver (this edge is a cycle)
            if known.concurrent != marker.concurrent and identity != self.root_identity:
                msg = (
                    f"Resolver {known.info.name!r} ({known.info.location}) is marked "
                    f"concurrent={known.concurrent} for {known.inline_from} but concurrent="
                    f"{marker.concurrent} for {where}. Use the same flag on every Resolve(...) of it."
                )
                raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
            if known.scope != marker.scope and identity != self.root_identity:
                msg = (
                    f"Resolver {known.info.name!r} ({known.info.location}) has scope={known.scope!r} "
                    f"for {known.inline_from} but scope={marker.scope!r} for {where}; a resolver's "
                    "value lives one way. Use the same scope on every Resolve(...) of it."
                )
                raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
            if known.inline != inline and not known.info.is_async and identity != self.root_identity:
                msg = (
                    f"Resolver {known.info.name!r} ({known.info.location}) is marked inline={known.inline} "
                    f"for {known.inline_from} but inline={inline} for {where}; a resolver runs one way. "
                    "Use the same inline flag on every Resolve(...) of it."
                )
                raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
            return
        if not callable(fn):
            msg = (
                f"Parameter {param.parameter.name!r} of {consumer.info.name!r} ({consumer.info.location}) "
                f"has Resolve({fn!r}), which is not callable (of type {type(fn).__name__}). "
                "Pass a function, a class or a callable object to Resolve(...)."
            )
            raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
        if marker.scope not in ("round", "call", "app"):
            msg = (
                f"Parameter {param.parameter.name!r} of {consumer.info.name!r} ({consumer.info.location}) "
                f"has Resolve({display_name(fn)}, scope={marker.scope!r}); a scope is 'round' (the "
                "default), 'call' or 'app'."
            )
            raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
        info = describe(fn, role="Resolver", localns=self.localns, below=self.below)
        node = Node(
            identity,
            info,
            inline,
            param.parameter.name,
            marker.scope,
            marker.concurrent,
            consumer,
            preorder=self.visits,
        )
        if marker.concurrent and (not info.is_async or marker.scope != "round" or info.cleanup):
            msg = (
                f"Resolver {info.name!r} ({info.location}) is marked concurrent=True but is not a "
                "plain async function of the default scope; only those run together with others. "
                "Make it `async def` returning its value, or drop concurrent=True."
            )
            raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
        self.visits += 1
        self.nodes[identity] = node
        node.params = [self.classify(info, p, "Resolver", self.argument_names) for p in info.parameters]
        if node.scope == "app":
            _check_app_scoped(node)
        if node.scope == "call" and info.cleanup is not None:
            msg = (
                f"Resolver {info.name!r} ({info.location}) cleans up after `yield` but is "
                "call-scoped; a call-scoped value is carried to later rounds, long after the "
                "cleanup of the round that made it. Return the value instead, or keep the default scope."
            )
            raise InvalidSignature(msg, function=fn, parameter=param.parameter.name)
        for dep in node.params:
            if isinstance(dep, ResolvedParam):
                self.visit(node, dep)
        node.postorder = self.finished
        self.finished += 1

    def classify(
        self,
        info: CallableInfo,
        parameter: inspect.Parameter,
        role: str,
        root_arguments: tuple[str, ...] | None,
    ) -> Param:
        name = parameter.name
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and root_arguments is None:
            # The SDK's reading: one call argument of that name, passed by keyword (so the
            # function finds it as kwargs["kwargs"]); a server using **kwargs starts as it does there.
            return ArgumentParam(parameter, info.hints.get(name, parameter.annotation))
        if parameter.kind in _VARIADIC:
            stars = "*" if parameter.kind is inspect.Parameter.VAR_POSITIONAL else "**"
            msg = (
                f"{role} {info.name!r} ({info.location}) takes {stars}{name}; parameters are filled one "
                f"by one, by name, type or resolver, so nothing can be passed there. Replace {stars}{name} "
                "with named parameters."
            )
            raise InvalidSignature(msg, function=info.fn, parameter=name)
        hint = info.hints.get(name, parameter.annotation)
        if isinstance(hint, Resolve) or isinstance(parameter.default, Resolve):
            hint = _with_default_marker(info, parameter, hint)
        if type(hint) is type:  # the most common annotation; no marker can hide in it
            context = context_type_of(hint, self.context_types)
            if context is not None:
                return ContextParam(parameter, hint, context[0], context[1])
            return self.argument(info, parameter, hint, root_arguments)
        inner = annotated_class(hint)
        if inner is not None:  # Annotated[cls, ...]: its markers are at the top level
            context = context_type_of(inner, self.context_types)
            if context is not None:
                return ContextParam(parameter, hint, context[0], context[1])
            marked = marked_by(inner, hint.__metadata__)
            if marked is not None:
                return self.resolved(info, parameter, hint, marked)
            return self.argument(info, parameter, hint, root_arguments)
        misplaced = misplaced_marker(hint)
        if misplaced == "union":
            msg = (
                f"Parameter {name!r} of {info.name!r} ({info.location}) wraps Resolve(...) in a union; "
                "Resolve is read only at the top level of an annotation. Write "
                "Annotated[T | None, Resolve(fn)] instead of Annotated[T, Resolve(fn)] | None."
            )
            raise InvalidSignature(msg, function=info.fn, parameter=name)
        if misplaced is not None:
            msg = (
                f"Parameter {name!r} of {info.name!r} ({info.location}) nests Resolve(...) inside "
                f"{misplaced}; a resolver fills a whole parameter, not the items of a container. Write "
                f"Annotated[{misplaced}, Resolve(fn)] with a resolver that returns the whole value."
            )
            raise InvalidSignature(msg, function=info.fn, parameter=name)
        context = context_type_of(hint, self.context_types)
        if context is not None:
            return ContextParam(parameter, hint, context[0], context[1])
        marked = top_level_markers(hint)
        if marked is not None:
            return self.resolved(info, parameter, hint, marked)
        return self.argument(info, parameter, hint, root_arguments)

    def resolved(self, info: CallableInfo, parameter: inspect.Parameter, hint: Any, marked: Marked) -> Param:
        """A parameter with its `Resolve` marker (a test's substitute in its place)."""
        name = parameter.name
        marker = marked.markers[0]
        substitute = self.substitutes.get(identity_of(marker.fn)) if self.substitutes else None
        if substitute is not None:
            marker = dataclasses.replace(marker, fn=substitute)
        if len(marked.markers) > 1:
            names = ", ".join(display_name(m.fn) for m in marked.markers)
            msg = (
                f"Parameter {name!r} of {info.name!r} ({info.location}) has {len(marked.markers)} "
                f"Resolve(...) markers ({names}); one resolver fills a parameter. Keep one marker, or "
                "write a resolver that depends on the others and combines their values."
            )
            raise InvalidSignature(msg, function=info.fn, parameter=name)
        return ResolvedParam(parameter, hint, marker, marked.annotation, marked.metadata)

    def argument(
        self,
        info: CallableInfo,
        parameter: inspect.Parameter,
        hint: Any,
        root_arguments: tuple[str, ...] | None,
    ) -> Param:
        """A call argument: any parameter of the root, a resolver's only by an argument's name."""
        name = parameter.name
        if root_arguments is None or name in root_arguments:
            return ArgumentParam(parameter, hint)
        arguments = ", ".join(repr(a) for a in root_arguments) or "none"
        contexts = ", ".join(t.__name__ for t in self.context_types) or "none declared"
        msg = (
            f"Resolver {info.name!r} ({info.location}) parameter {name!r} cannot be filled: it is not a call "
            f"argument (arguments: {arguments}), not annotated with a context type ({contexts}) and not "
            f"Annotated[_, Resolve(...)]. Rename it to a call argument, annotate it with a context type, or "
            "annotate it as Annotated[T, Resolve(fn)]."
        )
        raise InvalidSignature(msg, function=info.fn, parameter=name)


def _with_default_marker(info: CallableInfo, parameter: inspect.Parameter, hint: Any) -> Any:
    """Read `p: T = Resolve(fn)` as `p: Annotated[T, Resolve(fn)]`; refuse a bare `p: Resolve(fn)`.

    The default form is FastAPI's habit. Read as a default, it would publish `p` to the caller
    (a client could fill it and pose as someone else), so it means exactly the annotated form.
    """
    name = parameter.name
    if isinstance(hint, Resolve):
        msg = (
            f"Parameter {name!r} of {info.name!r} ({info.location}) is annotated with "
            f"Resolve({display_name(hint.fn)}) itself, which is a marker, not a type. Write "
            f"`{name}: Annotated[T, Resolve({display_name(hint.fn)})]` with T the type the resolver returns."
        )
        raise InvalidSignature(msg, function=info.fn, parameter=name)
    marker = parameter.default
    if not isinstance(marker, Resolve):
        return hint
    if hint is inspect.Parameter.empty:
        hint = Any
    return Annotated[hint, marker]


def _check_app_scoped(node: Node) -> None:
    """An app-scoped value is shared by every call: it cannot use anything of one call."""
    for param in node.params:
        name = param.parameter.name
        match param:
            case ArgumentParam():
                what = f"the call argument {name!r}"
            case ContextParam():
                what = f"the context value {name!r}"
            case ResolvedParam() if param.provider.scope != "app":
                what = f"the {param.provider.scope}-scoped resolver {display_name(param.provider.fn)!r}"
            case ResolvedParam():
                continue
        path = " -> ".join((*node.path, f"{node.info.name}({name})"))
        msg = (
            f"Resolver {node.info.name!r} ({node.info.location}) is app-scoped but depends on {what} "
            f"(path: {path}); an app-scoped value is computed once and shared by every call, so it "
            "may depend only on other app-scoped resolvers. Drop scope='app', or make what it "
            "depends on app-scoped too."
        )
        raise InvalidSignature(msg, function=node.info.fn, parameter=name)


def analyse(
    fn: Callable[..., Any],
    *,
    name: str,
    inline: bool,
    context_types: Collection[type],
    localns: Mapping[str, Any] | None,
    substitutes: Mapping[Hashable, Callable[..., Any]] | None = None,
) -> Analysis:
    """Classify the root's parameters, then every resolver it reaches, depth-first in signature order.

    `substitutes` maps a resolver's `identity_of` to the function that runs in its place.
    """
    return _Analyser(context_types, localns, substitutes or {}).analyse_root(fn, name, inline)
