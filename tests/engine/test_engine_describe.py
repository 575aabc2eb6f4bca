"""Reading a plain function from its code and annotations describes it as inspect and typing do."""

from __future__ import annotations

import collections.abc
import functools
import typing
from collections.abc import AsyncIterator, Callable, Iterator
from types import FunctionType
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples

from mcpdi.engine import InvalidSignature, Resolve
from mcpdi.engine._callables import (
    CallableInfo,
    _describe_by_inspection,
    _describe_plainly,
    describe,
    display_name,
)

# The functions below are made by exec, so that `from __future__ import annotations` above
# does not turn their annotations into strings (the fast path reads objects only).
NAMESPACE: dict[str, Any] = {
    "__name__": "shapes",
    "Annotated": Annotated,
    "Any": Any,
    "Literal": Literal,
    "Optional": Optional,
    "Union": Union,
    "Resolve": Resolve,
    "Callable": Callable,
    "abc": collections.abc,
    "typing": typing,
    "Iterator": Iterator,
    "AsyncIterator": AsyncIterator,
}


def source(source: str) -> Any:
    namespace = dict(NAMESPACE)
    exec(compile(source, "<shapes>", "exec", dont_inherit=True), namespace)
    return namespace["f"]


def by_inspection(fn: Any) -> CallableInfo:
    return _describe_by_inspection(fn, display_name(fn), role="Resolver", localns=None)


def stock() -> int:
    return 1


PLAIN = [
    "def f(): pass",
    "def f(title, copies=2): pass",
    "def f(title: str, /, copies: int = 2, *, note: str | None = None) -> str: pass",
    "def f(a: None, b: int = None) -> None: pass",
    "def f(*args: int, **kwargs: str) -> Any: pass",
    "def f(a, *args, b, c=3, **kwargs): pass",
    "def f(a, /, *, b): pass",
    "def f(s: Annotated[int, Resolve(abs)], t: Annotated[list[int], 'doc', Resolve(abs, inline=True)]): pass",
    "def f(mode: Literal['fast', 'slow'] = 'fast', pair: tuple[Literal['a'], int] = ('a', 1)): pass",
    "def f(m: dict[str, list[int]], o: Optional[int], u: Union[int, str], c: Callable[[int], str]): pass",
    "def f(c: abc.Callable[[int, str], bool], e: tuple[()], t: typing.List[int]): pass",
    "def f(d: typing.Dict[str, Any], s: typing.Sequence[Literal[1, 'one']]): pass",
    "async def f(title: str) -> int: return 1",
    "def f(title: str) -> Iterator[int]: yield 1",
    "async def f(title: str) -> AsyncIterator[int]: yield 1",
    "f = lambda title, copies=1: title",
    "def f(x: 3, y: 'int' = 1): pass",
]
STRINGS = [  # evaluated by typing.get_type_hints, parameters still read from the code
    "def f(title: 'str') -> 'int': pass",
    "def f(titles: list['str']): pass",
    "def f(titles: typing.List['str']): pass",
    "def f(x: Union[int, 'str']): pass",
    "def f(x: int | list['str']): pass",
    "def f(x: Annotated['int', 'doc']): pass",
]


@pytest.mark.parametrize("text", [*PLAIN, *STRINGS])
def test_a_function_is_described_as_signature_and_type_hints_describe_it(text: str) -> None:
    fn = source(text)
    assert _describe_plainly(fn, "Resolver", None) is not None
    assert describe(fn, role="Resolver", localns=None) == by_inspection(fn)


def test_a_string_annotation_is_evaluated_in_the_given_namespace_on_both_paths() -> None:
    fn = source("def f(stock: 'Stock') -> 'list[Stock]': pass")
    namespace = {"Stock": Service}
    info = describe(fn, role="Resolver", localns=namespace)
    assert info.hints == {"stock": Service, "return": list[Service]}
    assert info == _describe_by_inspection(fn, "f", role="Resolver", localns=namespace)


def test_a_string_naming_nothing_is_refused_with_the_inspecting_paths_text() -> None:
    fn = source("def f(stock: 'Stock'): pass")
    with pytest.raises(InvalidSignature) as plain:
        describe(fn, role="Resolver", localns=None)
    with pytest.raises(InvalidSignature) as inspected:
        by_inspection(fn)
    assert str(plain.value) == str(inspected.value)
    assert "the name 'Stock' is not defined" in str(plain.value)


def decorated() -> Any:
    def inner(title: str, copies: int) -> str:
        return title

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        return inner(*args, **kwargs)

    return wrapper


def with_signature() -> Any:
    fn = source("def f(*args, **kwargs): pass")
    fn.__signature__ = __import__("inspect").signature(source("def f(a: int, b: str = 'x'): pass"))
    return fn


class Service:
    def get(self, title: str) -> int:
        return 1

    def __call__(self, copies: int) -> int:
        return copies


@pytest.mark.parametrize(
    "make",
    [
        decorated,
        with_signature,
        lambda: functools.partial(source("def f(a: int, b: str): pass"), b="x"),
        lambda: Service().get,
        lambda: Service(),
        lambda: Service,
    ],
    ids=["wraps", "__signature__", "partial", "method", "instance", "class"],
)
def test_other_callables_are_read_by_inspection_as_before(make: Callable[[], Any]) -> None:
    fn = make()
    assert type(fn) is not FunctionType or fn.__dict__  # what keeps them off the plain path
    assert describe(fn, role="Resolver", localns=None) == by_inspection(fn)


ANNOTATIONS = st.sampled_from(
    [
        "",
        ": int",
        ": str | None",
        ": None",
        ": list[int]",
        ": dict[str, tuple[int, ...]]",
        ": Literal['a', 'b']",
        ": Annotated[int, Resolve(abs)]",
        ": Annotated[Optional[list[str]], 'meta', Resolve(abs)]",
        ": Callable[[int], str]",
        ": 'int'",
        ": list['int']",
        ": Union[int, 'str']",
    ]
)


DEFAULTS = st.sampled_from(["None", "1", "'x'", "()"])


@st.composite
def signatures(draw: st.DrawFn) -> str:
    """`def f(<positional-only>, /, <positional>, *args, <keyword-only>, **kwargs) -> R`, parts optional."""
    counter = iter(range(100))

    def parameters(defaults: bool) -> list[str]:
        count = draw(st.integers(min_value=0, max_value=3))
        return [
            f"p{next(counter)}{draw(ANNOTATIONS)}" + (f" = {draw(DEFAULTS)}" if defaults else "")
            for _ in range(count)
        ]

    # Positional parameters after one with a default need one too: required ones come first.
    positional_only = parameters(defaults=False)
    positional = parameters(defaults=False) + parameters(defaults=True)
    parts = [*positional_only, *(["/"] if positional_only else []), *positional]
    keyword_only = parameters(defaults=False) + parameters(defaults=True)
    draw(st.randoms()).shuffle(keyword_only)  # keyword-only ones mix freely
    if draw(st.booleans()):
        parts.append(f"*args{draw(ANNOTATIONS)}")
    elif keyword_only:
        parts.append("*")
    parts += keyword_only
    if draw(st.booleans()):
        parts.append(f"**kwargs{draw(ANNOTATIONS)}")
    keyword = draw(st.sampled_from(["def", "async def"]))
    returns = draw(st.sampled_from(["", " -> int", " -> None", " -> list[str]", " -> 'int'"]))
    return f"{keyword} f({', '.join(parts)}){returns}: pass"


@settings(max_examples=examples(200), deadline=None)
@given(signatures())
def test_random_signatures_are_described_alike_on_both_paths(text: str) -> None:
    fn = source(text)
    assert describe(fn, role="Resolver", localns=None) == by_inspection(fn)


def test_a_forged_parameter_name_in_the_code_is_refused_as_the_inspecting_path_refuses_it() -> None:
    fn = source("def f(title: str): pass")
    fn.__code__ = fn.__code__.replace(co_varnames=("class",))
    assert _describe_plainly(fn, "Resolver", None) is None
    with pytest.raises(InvalidSignature) as error:
        describe(fn, role="Resolver", localns=None)
    assert "has no signature Python can read ('class' is not a valid parameter name)" in str(error.value)
