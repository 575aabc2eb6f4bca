"""Reading a callable once: its name, location, parameters, type hints and whether it is async."""

from __future__ import annotations

import functools
import inspect
import keyword
import os
import sys
import typing
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from types import FunctionType, MethodType
from typing import Any

from mcpdi.engine._annotations import annotated_class
from mcpdi.engine._errors import InvalidSignature
from mcpdi.engine._plan import Cleanup
from mcpdi.engine._records import built_fast


@built_fast
@dataclass(frozen=True, slots=True)
class CallableInfo:
    """What compile needs to know about one function, resolver or root."""

    fn: Callable[..., Any]
    name: str
    qualname: str  # module:qualname
    location: str  # file:line
    is_async: bool
    parameters: tuple[inspect.Parameter, ...]
    hints: Mapping[str, Any]
    cleanup: Cleanup | None  # see `cleanup_kind`


def identity_of(fn: object) -> Hashable:
    """A resolver's identity: the same function is one step however often it is referenced."""
    if isinstance(fn, MethodType):
        # `svc.get` builds a new bound-method object on each access: identify by its parts.
        return (id(fn.__func__), id(fn.__self__))
    return id(fn)


def _unwrap_partials_and_methods(fn: object) -> object:
    while True:
        if isinstance(fn, functools.partial):
            fn = typing.cast("functools.partial[Any]", fn).func
        elif isinstance(fn, MethodType | staticmethod | classmethod):
            fn = typing.cast("Any", fn).__func__
        else:
            return fn


def _code_target(fn: object) -> object:
    """The object whose code and hints describe `fn` (partials, methods and instances unwrapped)."""
    fn = _unwrap_partials_and_methods(fn)
    if isinstance(fn, type):
        init: object = fn.__init__
        return init if isinstance(init, FunctionType) else fn
    if not isinstance(fn, FunctionType) and not inspect.isbuiltin(fn) and callable(fn):
        return type(fn).__call__  # a callable instance: its class's __call__
    return fn


def display_name(fn: object) -> str:
    if isinstance(fn, functools.partial):
        return f"partial({display_name(typing.cast('functools.partial[Any]', fn).func)})"
    if isinstance(fn, MethodType):
        return str(getattr(fn.__func__, "__qualname__", fn.__func__.__name__)).rsplit(".<locals>.", 1)[-1]
    if isinstance(fn, type) or inspect.isfunction(fn) or inspect.isbuiltin(fn):
        return str(getattr(fn, "__name__", repr(fn)))
    if callable(fn):
        return type(fn).__name__
    return repr(fn)


def qualified_name(fn: object) -> str:
    """`module:qualname` of the code behind `fn` (a callable instance: its class)."""
    if isinstance(fn, functools.partial):
        inner = qualified_name(typing.cast("functools.partial[Any]", fn).func)
        module, _, rest = inner.partition(":")
        return f"{module}:partial({rest})"
    if isinstance(fn, MethodType | staticmethod):
        fn = fn.__func__
    if not (isinstance(fn, type) or inspect.isfunction(fn) or inspect.isbuiltin(fn)):
        fn = type(fn)
    module = getattr(fn, "__module__", None) or "?"
    return f"{module}:{getattr(fn, '__qualname__', repr(fn))}"


def location_of(fn: object) -> str:
    """`file:line` of the code behind `fn`, the file relative to the working directory if below it."""
    target = _code_target(fn)
    code = getattr(inspect.unwrap(target), "__code__", None)  # pyright: ignore[reportArgumentType]
    if code is not None and code.co_filename.startswith("<") and isinstance(fn, type):
        code = None  # a generated __init__ (dataclasses): look for the class body's own methods
    if code is None and isinstance(fn, type):
        module_file = getattr(sys.modules.get(fn.__module__), "__file__", None)
        codes = [getattr(v, "__code__", None) for v in vars(fn).values()]
        own = [c for c in codes if c is not None and c.co_filename == module_file]
        code = min(own, key=lambda c: c.co_firstlineno, default=None)
        if code is None and module_file:
            return _relative(str(module_file))
    if code is None:
        return "<built-in>"
    return f"{_relative(str(code.co_filename))}:{code.co_firstlineno}"


def working_directory() -> str:
    """The prefix `_relative` strips: read once per compile, not once per function."""
    return os.getcwd() + os.sep


def _relative(filename: str, below: str | None = None) -> str:
    below = below or working_directory()
    return filename[len(below) :] if filename.startswith(below) else filename


def is_async(fn: object) -> bool:
    while isinstance(fn, functools.partial):
        fn = typing.cast("functools.partial[Any]", fn).func
    if isinstance(fn, type):
        return False
    if inspect.iscoroutinefunction(fn):
        return True
    if inspect.isfunction(fn) or inspect.ismethod(fn) or not callable(fn):
        return False
    return inspect.iscoroutinefunction(type(fn).__call__)


def cleanup_kind(fn: object) -> Cleanup | None:
    """What kind of cleanup resolver `fn` is (generator, context manager factory), or None."""
    target = _code_target(fn)
    if isinstance(fn, type):
        return None
    if inspect.isasyncgenfunction(target):
        return "async_generator"
    if inspect.isgeneratorfunction(target):
        return "generator"
    wrapped = getattr(target, "__wrapped__", None)
    if wrapped is not None and inspect.isasyncgenfunction(wrapped):
        return "async_context_manager"
    if wrapped is not None and inspect.isgeneratorfunction(wrapped):
        return "context_manager"
    return None


def _bound_keywords(fn: object) -> set[str]:
    names: set[str] = set()
    while isinstance(fn, functools.partial):
        partial = typing.cast("functools.partial[Any]", fn)
        names.update(partial.keywords)
        fn = partial.func
    return names


def _check_name(parameter: str, role: str, name: str, location: str, fn: object) -> None:
    """Parameter names are written into the generated code (`name=value`): only identifiers pass."""
    if parameter.isidentifier() and not keyword.iskeyword(parameter):
        return
    msg = (
        f"{role} {name!r} ({location}) has a parameter named {parameter!r}, which is not a Python "
        "identifier; a signature from `def` always has identifiers. Fix the `__signature__` set on "
        "it, or wrap it in a function with named parameters."
    )
    raise InvalidSignature(msg, function=fn, parameter=parameter)


_EMPTY = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY


_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD
_new_parameter = inspect.Parameter.__new__
# `inspect.Parameter`'s own state; where a Python keeps other state, parameters are built by
# its constructor (with the same checks `_writable` made).
_PARAMETER_SLOTS_KNOWN = getattr(inspect.Parameter, "__slots__", None) == (
    "_name",
    "_kind",
    "_default",
    "_annotation",
)


def _writable(name: str) -> bool:
    """Whether `def` could name a parameter `name`: what `inspect.Parameter` checks."""
    if name in _WRITABLE_NAMES:
        return True
    if not name.isidentifier() or keyword.iskeyword(name):
        return False
    if len(_WRITABLE_NAMES) < _WRITABLE_NAMES_KEPT:
        _WRITABLE_NAMES.add(name)
    return True


# Parameter names already found writable: the same few names recur across a server's functions.
_WRITABLE_NAMES: set[str] = set()
_WRITABLE_NAMES_KEPT = 4096


def _stars(flags: int) -> int:
    """How many of `*args` and `**kwargs` a code object's flags say it has."""
    return bool(flags & inspect.CO_VARARGS) + bool(flags & inspect.CO_VARKEYWORDS)


def _parameter(name: str, kind: Any, default: Any, annotation: Any) -> inspect.Parameter:
    """`inspect.Parameter(name, kind, default=..., annotation=...)` without re-checking what
    `_describe_plainly` checked once (an identifier name, a kind from the code's own flags):
    its constructor is most of the cost of reading a plain function otherwise."""
    if not _PARAMETER_SLOTS_KNOWN:
        return inspect.Parameter(name, kind, default=default, annotation=annotation)
    parameter = _new_parameter(inspect.Parameter)
    parameter._name = name  # pyright: ignore[reportPrivateUsage]
    parameter._kind = kind  # pyright: ignore[reportPrivateUsage]
    parameter._default = default  # pyright: ignore[reportPrivateUsage]
    parameter._annotation = annotation  # pyright: ignore[reportPrivateUsage]
    return parameter


def _needs_evaluation(annotation: object) -> bool:
    """Whether `typing.get_type_hints` would change `annotation`: a string or a forward reference
    anywhere in it (a `Literal`'s strings are values, left alone)."""
    if type(annotation) is type:  # a plain class, the most common annotation
        return False
    if annotated_class(annotation) is not None:  # Annotated[cls, ...]: its extras are values
        return False
    if isinstance(annotation, str | typing.ForwardRef):
        return True
    args = getattr(annotation, "__args__", None)
    if not isinstance(args, tuple) or typing.get_origin(annotation) is typing.Literal:
        return False
    return any(_needs_evaluation(arg) for arg in typing.cast("tuple[object, ...]", args))


def _describe_plainly(
    fn: FunctionType, role: str, localns: Mapping[str, Any] | None, below: str | None = None
) -> CallableInfo | None:
    """`describe` for a plain function, read from its code, defaults and annotations: what
    `inspect.signature` gives for it, at a fraction of the cost, and its annotations as they
    are when they are objects already (`typing.get_type_hints` evaluates them otherwise). None
    when the annotations cannot be read or a parameter name is one `def` cannot write: the
    inspecting path reports those.
    """
    try:
        annotations: dict[str, Any] = fn.__annotations__
    except Exception:  # annotations evaluated on access (PEP 649) can fail: the inspecting path reports it
        return None
    evaluate = nones = False
    for annotation in annotations.values():
        if type(annotation) is type:  # a plain class, the most common annotation
            continue
        if annotation is None:
            nones = True
        elif not evaluate and _needs_evaluation(annotation):
            evaluate = True
    code = fn.__code__
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    flags = code.co_flags
    for name in names[: positional + keyword_only + _stars(flags)]:
        if not _writable(name):
            return None  # a code object `def` cannot write (renamed or synthetic): the inspecting path
    defaults = fn.__defaults__ or ()
    keyword_defaults = fn.__kwdefaults__ or {}
    first_default = positional - len(defaults)
    parameters: list[inspect.Parameter] = []
    for index, name in enumerate(names[:positional]):
        kind = _POSITIONAL_ONLY if index < code.co_posonlyargcount else _POSITIONAL_OR_KEYWORD
        default = defaults[index - first_default] if index >= first_default else _EMPTY
        parameters.append(_parameter(name, kind, default, annotations.get(name, _EMPTY)))
    after = positional + keyword_only
    if flags & inspect.CO_VARARGS:
        name = names[after]
        after += 1
        parameters.append(_parameter(name, _VAR_POSITIONAL, _EMPTY, annotations.get(name, _EMPTY)))
    for name in names[positional : positional + keyword_only]:
        default = keyword_defaults.get(name, _EMPTY)
        parameters.append(_parameter(name, _KEYWORD_ONLY, default, annotations.get(name, _EMPTY)))
    if flags & inspect.CO_VARKEYWORDS:
        name = names[after]
        parameters.append(_parameter(name, _VAR_KEYWORD, _EMPTY, annotations.get(name, _EMPTY)))
    location = f"{_relative(code.co_filename, below)}:{code.co_firstlineno}"
    if evaluate:
        hints = _evaluated_hints(fn, fn, role, fn.__name__, location, localns)
    elif nones:
        hints = dict(annotations)
        hints.update((name, type(None)) for name, value in annotations.items() if value is None)
    else:
        # The hints are the annotations as they are: the function's own dict, which compile
        # only reads, rather than a copy that every plan would keep for as long as it lives.
        hints = annotations
    cleanup: Cleanup | None = None
    if flags & inspect.CO_ASYNC_GENERATOR:
        cleanup = "async_generator"
    elif flags & inspect.CO_GENERATOR:
        cleanup = "generator"
    qualname = f"{fn.__module__ or '?'}:{fn.__qualname__}"
    is_async = bool(flags & inspect.CO_COROUTINE)
    # By position: a record built for every function a server registers.
    return CallableInfo(fn, fn.__name__, qualname, location, is_async, tuple(parameters), hints, cleanup)


def describe(
    fn: Callable[..., Any], *, role: str, localns: Mapping[str, Any] | None, below: str | None = None
) -> CallableInfo:
    """Read `fn` once. `role` ("Resolver", "Function") starts error messages; `below` is the
    `working_directory()` its location is told relative to (read now when not given)."""
    # Decorated or otherwise marked functions (`__wrapped__`, `__signature__` and kin live in
    # `__dict__`), partials, classes and methods take the inspecting path.
    if type(fn) is FunctionType and not fn.__dict__:
        info = _describe_plainly(fn, role, localns, below)
        if info is not None:
            return info
    return _describe_by_inspection(fn, display_name(fn), role=role, localns=localns)


def _describe_by_inspection(
    fn: Callable[..., Any], name: str, *, role: str, localns: Mapping[str, Any] | None
) -> CallableInfo:
    """`describe` for any callable: `inspect.signature` and `typing.get_type_hints`."""
    location = location_of(fn)
    try:
        signature = inspect.signature(fn)
    except (ValueError, TypeError) as error:
        msg = (
            f"{role} {name!r} ({location}) has no signature Python can read ({error}). "
            f"Wrap it in a function with annotated parameters, e.g. `def make_it() -> T: return {name}()`."
        )
        raise InvalidSignature(msg, function=fn) from None
    hints = _evaluated_hints(_code_target(fn), fn, role, name, location, localns)
    dropped = _bound_keywords(fn)
    parameters = tuple(p for p in signature.parameters.values() if p.name not in dropped)
    for parameter in parameters:
        _check_name(parameter.name, role, name, location, fn)
    return CallableInfo(
        fn=fn,
        name=name,
        qualname=qualified_name(fn),
        location=location,
        is_async=is_async(fn),
        parameters=parameters,
        hints=hints,
        cleanup=cleanup_kind(fn),
    )


def _evaluated_hints(
    target: object, fn: object, role: str, name: str, location: str, localns: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`typing.get_type_hints` of `target` (the code behind `fn`), a failure told as `InvalidSignature`."""
    try:
        return typing.get_type_hints(target, localns=dict(localns) if localns else None, include_extras=True)
    except Exception as error:
        missing = getattr(error, "name", None) if isinstance(error, NameError) else None
        if missing:
            fix = (
                f"Define or import {missing!r} at module level, or pass "
                f"localns={{{missing!r}: {missing}}} to compile_plan (needed for locally defined names "
                "under `from __future__ import annotations`)."
            )
            what = f"the name {missing!r} is not defined"
        else:
            fix = "Fix the annotation so that typing.get_type_hints() can evaluate it."
            what = f"{type(error).__name__}: {error}"
        msg = f"Cannot evaluate the type annotations of {role.lower()} {name!r} ({location}): {what}. {fix}"
        raise InvalidSignature(msg, function=fn) from error
