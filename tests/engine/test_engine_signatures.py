"""Registration errors: each mistake fails at compile_plan with a message saying what, where, how to fix."""

# The pinned messages are single long lines on purpose: they are compared as written.
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot

from mcpdi.engine import InvalidSignature, Resolve, compile_plan


class Context:
    """A context type a host would declare."""


def refusal(root: Any, **options: Any) -> InvalidSignature:
    """The InvalidSignature that `compile_plan(root, **options)` raises."""
    with pytest.raises(InvalidSignature) as caught:
        compile_plan(root, **options)
    return caught.value


def text_of(error: InvalidSignature) -> str:
    """The message with line numbers replaced, so that editing this file keeps the pins stable."""
    return re.sub(r"\.py:\d+", ".py:N", str(error))


def needs_user(user_id: str) -> str:
    return user_id


async def tool_with_unknown_parameter(title: str, user: Annotated[str, Resolve(needs_user)]) -> str:
    return title


def test_a_resolver_parameter_that_fits_no_kind_names_the_resolver_the_parameter_and_the_kinds() -> None:
    error = refusal(tool_with_unknown_parameter, context_types=(Context,))
    assert text_of(error) == snapshot(
        "Resolver 'needs_user' (tests/engine/test_engine_signatures.py:N) parameter 'user_id' cannot be filled: it is not a call argument (arguments: 'title'), not annotated with a context type (Context) and not Annotated[_, Resolve(...)]. Rename it to a call argument, annotate it with a context type, or annotate it as Annotated[T, Resolve(fn)]."
    )
    assert error.function is needs_user
    assert error.parameter == "user_id"


def a_hop(x: Annotated[int, Resolve(b_hop)]) -> int:  # pyright: ignore[reportUndefinedVariable, reportUnknownArgumentType]  # defined below
    return x


def b_hop(x: Annotated[int, Resolve(c_hop)]) -> int:  # pyright: ignore[reportUndefinedVariable, reportUnknownArgumentType]  # defined below
    return x


def c_hop(x: Annotated[int, Resolve(a_hop)]) -> int:
    return x


async def tool_with_cycle(v: Annotated[int, Resolve(a_hop)]) -> int:
    return v


def test_a_cycle_is_drawn_as_its_whole_path_with_qualname_and_location_of_each_hop() -> None:
    error = refusal(tool_with_cycle)
    assert text_of(error) == snapshot("""\
Resolver 'a_hop' has a cyclic dependency. Resolvers of 'tool_with_cycle' depend on each other in a cycle: a_hop -> b_hop -> c_hop -> a_hop
   a_hop  test_engine_signatures:a_hop  (tests/engine/test_engine_signatures.py:N)
-> b_hop  test_engine_signatures:b_hop  (tests/engine/test_engine_signatures.py:N)
-> c_hop  test_engine_signatures:c_hop  (tests/engine/test_engine_signatures.py:N)
-> a_hop  test_engine_signatures:a_hop  (tests/engine/test_engine_signatures.py:N)
A resolver cannot depend on itself, directly or through other resolvers; remove one of these dependencies.\
""")
    assert error.cycle == (
        f"{__name__}:a_hop",
        f"{__name__}:b_hop",
        f"{__name__}:c_hop",
        f"{__name__}:a_hop",
    )


def selfish(x: Annotated[int, Resolve(selfish)]) -> int:  # pyright: ignore[reportUndefinedVariable, reportUnknownArgumentType]  # itself
    return x


async def tool_with_self_cycle(v: Annotated[int, Resolve(selfish)]) -> int:
    return v


def test_a_resolver_depending_on_itself_is_a_cycle_of_one_hop() -> None:
    assert text_of(refusal(tool_with_self_cycle)) == snapshot("""\
Resolver 'selfish' has a cyclic dependency. Resolvers of 'tool_with_self_cycle' depend on each other in a cycle: selfish -> selfish
   selfish  test_engine_signatures:selfish  (tests/engine/test_engine_signatures.py:N)
-> selfish  test_engine_signatures:selfish  (tests/engine/test_engine_signatures.py:N)
A resolver cannot depend on itself, directly or through other resolvers; remove one of these dependencies.\
""")


def make() -> int:
    return 1


async def tool_with_optional_marker(v: Annotated[int, Resolve(make)] | None) -> int | None:
    return v


async def tool_with_marker_in_list(v: list[Annotated[int, Resolve(make)]]) -> int:
    return 0


async def tool_with_marker_in_dict(v: dict[str, Annotated[int, Resolve(make)]]) -> int:
    return 0


def test_resolve_wrapped_in_a_union_says_union() -> None:
    assert text_of(refusal(tool_with_optional_marker)) == snapshot(
        "Parameter 'v' of 'tool_with_optional_marker' (tests/engine/test_engine_signatures.py:N) wraps Resolve(...) in a union; Resolve is read only at the top level of an annotation. Write Annotated[T | None, Resolve(fn)] instead of Annotated[T, Resolve(fn)] | None."
    )


def test_resolve_nested_in_a_container_names_the_container_not_a_union() -> None:
    assert text_of(refusal(tool_with_marker_in_list)) == snapshot(
        "Parameter 'v' of 'tool_with_marker_in_list' (tests/engine/test_engine_signatures.py:N) nests Resolve(...) inside list[...]; a resolver fills a whole parameter, not the items of a container. Write Annotated[list[...], Resolve(fn)] with a resolver that returns the whole value."
    )
    assert text_of(refusal(tool_with_marker_in_dict)) == snapshot(
        "Parameter 'v' of 'tool_with_marker_in_dict' (tests/engine/test_engine_signatures.py:N) nests Resolve(...) inside dict[...]; a resolver fills a whole parameter, not the items of a container. Write Annotated[dict[...], Resolve(fn)] with a resolver that returns the whole value."
    )


def first() -> int:
    return 1


def second() -> int:
    return 2


async def tool_with_two_markers(v: Annotated[int, "doc", Resolve(first), Resolve(second)]) -> int:
    return v


def test_two_resolve_markers_on_one_parameter_are_rejected() -> None:
    assert text_of(refusal(tool_with_two_markers)) == snapshot(
        "Parameter 'v' of 'tool_with_two_markers' (tests/engine/test_engine_signatures.py:N) has 2 Resolve(...) markers (first, second); one resolver fills a parameter. Keep one marker, or write a resolver that depends on the others and combines their values."
    )


def unresolvable(x: Missing) -> int:  # type: ignore[name-defined]  # noqa: F821
    return 1


async def tool_with_unresolvable_resolver(v: Annotated[int, Resolve(unresolvable)]) -> int:  # pyright: ignore[reportUnknownArgumentType]
    return v


def test_an_annotation_that_cannot_be_evaluated_names_the_function_and_the_missing_name() -> None:
    error = refusal(tool_with_unresolvable_resolver)
    assert text_of(error) == snapshot(
        "Cannot evaluate the type annotations of resolver 'unresolvable' (tests/engine/test_engine_signatures.py:N): the name 'Missing' is not defined. Define or import 'Missing' at module level, or pass localns={'Missing': Missing} to compile_plan (needed for locally defined names under `from __future__ import annotations`)."
    )
    assert error.function is unresolvable


def test_a_local_resolver_under_postponed_annotations_needs_localns_and_says_so() -> None:
    def local_stock(title: str) -> int:
        return 3

    async def tool_local(title: str, stock: Annotated[int, Resolve(local_stock)]) -> int:
        return stock

    assert text_of(refusal(tool_local)) == snapshot(
        "Cannot evaluate the type annotations of function 'tool_local' (tests/engine/test_engine_signatures.py:N): the name 'local_stock' is not defined. Define or import 'local_stock' at module level, or pass localns={'local_stock': local_stock} to compile_plan (needed for locally defined names under `from __future__ import annotations`)."
    )
    plan = compile_plan(tool_local, localns=locals())
    assert [step.name for step in plan.steps] == ["local_stock"]


def variadic(*args: Any) -> int:
    return 1


def keywords(**kwargs: Any) -> int:
    return 1


async def tool_with_variadic_resolver(v: Annotated[int, Resolve(variadic)]) -> int:
    return v


async def tool_with_keywords_resolver(v: Annotated[int, Resolve(keywords)]) -> int:
    return v


async def variadic_tool(*names: str) -> int:
    return 0


async def tagged(title: str, **labels: str) -> str:
    return f"{title} {labels}"


@pytest.mark.anyio
async def test_a_roots_star_star_parameter_is_one_argument_of_its_name_as_in_the_sdk() -> None:
    plan = compile_plan(tagged)
    assert [(a.name, a.annotation, a.required) for a in plan.arguments] == [
        ("title", str, True),
        ("labels", str, True),
    ]
    assert await plan.run({"title": "Dune", "labels": "red"}) == "Dune {'labels': 'red'}"


def test_star_args_are_rejected_in_resolvers_and_roots_and_star_star_kwargs_in_resolvers() -> None:
    assert text_of(refusal(tool_with_variadic_resolver)) == snapshot(
        "Resolver 'variadic' (tests/engine/test_engine_signatures.py:N) takes *args; parameters are filled one by one, by name, type or resolver, so nothing can be passed there. Replace *args with named parameters."
    )
    assert text_of(refusal(tool_with_keywords_resolver)) == snapshot(
        "Resolver 'keywords' (tests/engine/test_engine_signatures.py:N) takes **kwargs; parameters are filled one by one, by name, type or resolver, so nothing can be passed there. Replace **kwargs with named parameters."
    )
    assert text_of(refusal(variadic_tool)) == snapshot(
        "Function 'variadic_tool' (tests/engine/test_engine_signatures.py:N) takes *names; parameters are filled one by one, by name, type or resolver, so nothing can be passed there. Replace *names with named parameters."
    )


async def tool_with_builtin_type(v: Annotated[dict[str, int], Resolve(dict)]) -> int:
    return 0


# `max` has no signature on any supported Python (`time.time` gained one in 3.13).
async def tool_with_builtin_function(v: Annotated[float, Resolve(max)]) -> float:
    return v


async def tool_with_number(v: Annotated[int, Resolve(42)]) -> int:  # pyright: ignore[reportArgumentType]
    return v


def test_builtins_without_a_signature_and_non_callables_are_invalid_signatures() -> None:
    assert text_of(refusal(tool_with_builtin_type)) == snapshot(
        "Resolver 'dict' (<built-in>) has no signature Python can read (no signature found for builtin type <class 'dict'>). Wrap it in a function with annotated parameters, e.g. `def make_it() -> T: return dict()`."
    )
    assert text_of(refusal(tool_with_builtin_function)) == snapshot(
        "Resolver 'max' (<built-in>) has no signature Python can read (no signature found for builtin <built-in function max>). Wrap it in a function with annotated parameters, e.g. `def make_it() -> T: return max()`."
    )
    assert text_of(refusal(tool_with_number)) == snapshot(
        "Parameter 'v' of 'tool_with_number' (tests/engine/test_engine_signatures.py:N) has Resolve(42), which is not callable (of type int). Pass a function, a class or a callable object to Resolve(...)."
    )


def session() -> Iterator[int]:
    yield 1


async def async_session() -> AsyncIterator[int]:
    yield 1


@contextlib.contextmanager
def managed() -> Generator[int]:
    yield 1


@contextlib.asynccontextmanager
async def async_managed() -> AsyncGenerator[int]:
    yield 1


def test_cleanup_resolvers_compile_with_their_kind_and_never_ask() -> None:
    async def tool(
        a: Annotated[int, Resolve(session)],
        b: Annotated[int, Resolve(async_session)],
        c: Annotated[int, Resolve(managed)],
        d: Annotated[int, Resolve(async_managed)],
    ) -> int:
        return a + b + c + d

    plan = compile_plan(tool, localns=globals())
    assert [(s.name, s.cleanup, s.may_ask) for s in plan.steps] == [
        ("session", "generator", False),
        ("async_session", "async_generator", False),
        ("managed", "context_manager", False),
        ("async_managed", "async_context_manager", False),
    ]


def flexible() -> int:
    return 1


async def tool_with_mixed_inline(
    a: Annotated[int, Resolve(flexible)], b: Annotated[int, Resolve(flexible, inline=True)]
) -> int:
    return a + b


def test_one_resolver_marked_inline_in_one_place_and_not_in_another_is_rejected() -> None:
    assert text_of(refusal(tool_with_mixed_inline)) == snapshot(
        "Resolver 'flexible' (tests/engine/test_engine_signatures.py:N) is marked inline=False for parameter 'a' of 'tool_with_mixed_inline' but inline=True for parameter 'b' of 'tool_with_mixed_inline'; a resolver runs one way. Use the same inline flag on every Resolve(...) of it."
    )


def test_a_root_that_is_not_callable_is_an_invalid_signature() -> None:
    assert text_of(refusal(42)) == snapshot(
        "compile_plan needs a callable, got 42 (of type int); pass the function to compile."
    )


def test_locations_point_at_the_resolver_definition_relative_to_the_working_directory() -> None:
    line = needs_user.__code__.co_firstlineno
    assert f"(tests/engine/test_engine_signatures.py:{line})" in str(refusal(tool_with_unknown_parameter))
