"""Running a plan: arguments, context, every kind of callable, once per round, threads and failures."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from mcpdi.engine import MissingArgument, Resolve, ResolverError, UnansweredQuestion, compile_plan

pytestmark = pytest.mark.anyio


async def check_stock(title: str) -> int:
    return len(title)


async def reserve_book(title: str, stock: Annotated[int, Resolve(check_stock)]) -> str:
    return f"{title}: {stock} in stock"


async def test_a_resolver_fills_a_parameter_from_a_call_argument_by_name() -> None:
    plan = compile_plan(reserve_book)
    assert await plan.run({"title": "Dune"}) == "Dune: 4 in stock"


async def test_resolve_returns_the_roots_parameter_values_instead_of_calling_it() -> None:
    plan = compile_plan(reserve_book)
    assert await plan.resolve({"title": "Dune"}) == {"title": "Dune", "stock": 4}


async def test_resolve_and_run_answer_alike_whichever_of_them_runs_first() -> None:
    resolved_first, run_first = compile_plan(reserve_book), compile_plan(reserve_book)
    assert await resolved_first.resolve({"title": "Dune"}) == {"title": "Dune", "stock": 4}
    assert await resolved_first.run({"title": "Dune"}) == "Dune: 4 in stock"
    assert await run_first.run({"title": "Dune"}) == "Dune: 4 in stock"
    assert await run_first.resolve({"title": "Dune"}) == {"title": "Dune", "stock": 4}
    assert resolved_first.source == run_first.source


async def test_the_plan_lists_arguments_and_resolved_parameters_for_hosts() -> None:
    plan = compile_plan(reserve_book)
    assert [a.name for a in plan.arguments] == ["title"]
    assert [b.parameter for b in plan.resolved_params] == ["stock"]
    assert plan.context_params == ()
    assert plan.arguments[0].annotation is str
    assert plan.arguments[0].required


calls: list[str] = []


async def base(title: str) -> str:
    calls.append("base")
    return title.upper()


async def left(b: Annotated[str, Resolve(base)]) -> str:
    calls.append("left")
    return "L" + b


async def right(b: Annotated[str, Resolve(base)]) -> str:
    calls.append("right")
    return "R" + b


async def diamond(
    title: str,
    l_value: Annotated[str, Resolve(left)],
    r_value: Annotated[str, Resolve(right)],
    b: Annotated[str, Resolve(base)],
) -> str:
    calls.append("body")
    return f"{l_value} {r_value} {b}"


async def test_each_resolver_runs_once_per_round_however_many_consumers_in_dependency_order() -> None:
    plan = compile_plan(diamond)
    calls.clear()
    assert await plan.run({"title": "x"}) == "LX RX X"
    assert calls == ["base", "left", "right", "body"]
    calls.clear()
    await plan.run({"title": "x"})
    assert calls == ["base", "left", "right", "body"], "nothing is cached across calls"


async def test_a_missing_argument_raises_missing_argument_and_defaults_fill_omitted_ones() -> None:
    def pages(title: str, count: int = 10) -> int:
        return count

    async def tool(title: str, n: Annotated[int, Resolve(pages, inline=True)], count: int = 10) -> int:
        return n

    plan = compile_plan(tool, localns=locals(), name="pages_tool")
    assert await plan.run({"title": "a"}) == 10
    assert await plan.run({"title": "a", "count": 3}) == 3
    with pytest.raises(MissingArgument) as error:
        await plan.run({})
    assert str(error.value) == "Call of 'pages_tool' lacks the argument 'title'"
    assert isinstance(error.value, KeyError)
    assert error.value.name == "title"


class Context:
    def __init__(self, user: str) -> None:
        self.user = user


class RequestContext(Context):
    pass


def who(ctx: RequestContext) -> str:
    return ctx.user


def maybe_who(ctx: Context | None) -> str:
    return ctx.user if ctx else "nobody"


async def greet(
    ctx: Annotated[Context, "doc"],
    name: Annotated[str, Resolve(who, inline=True)],
    other: Annotated[str, Resolve(maybe_who, inline=True)],
) -> str:
    assert isinstance(ctx, Context)
    return f"{name}/{other}"


async def test_context_values_are_filled_by_type_including_subclasses_optionals_and_annotated() -> None:
    plan = compile_plan(greet, context_types=(Context,))
    assert [b.parameter for b in plan.context_params] == ["ctx"]
    assert plan.arguments == ()
    ctx = Context("ada")
    assert await plan.run({}, {Context: ctx}) == "ada/ada"
    with pytest.raises(MissingArgument) as error:
        await plan.run({})
    assert error.value.name is Context


async def test_sync_resolvers_run_on_a_worker_thread_unless_inline() -> None:
    seen: dict[str, int] = {}

    def offloaded() -> int:
        seen["offloaded"] = threading.get_ident()
        return 1

    def inline() -> int:
        seen["inline"] = threading.get_ident()
        return 2

    def sync_root(
        a: Annotated[int, Resolve(offloaded)], b: Annotated[int, Resolve(inline, inline=True)]
    ) -> int:
        seen["root"] = threading.get_ident()
        return a + b

    plan = compile_plan(sync_root, localns=locals())
    assert await plan.run({}) == 3
    here = threading.get_ident()
    assert seen["inline"] == here
    assert seen["offloaded"] != here
    assert seen["root"] != here, "a sync root is offloaded by default"
    plan = compile_plan(sync_root, localns=locals(), root_inline=True)
    await plan.run({})
    assert seen["root"] == here


class Stock:
    def __init__(self, title: str) -> None:
        self.title = title


class Service:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def lookup(self, title: str) -> str:
        return self.prefix + title

    async def __call__(self, title: str) -> str:
        return "call:" + title

    @staticmethod
    def static(title: str) -> str:
        return "static:" + title

    @classmethod
    def klass(cls, title: str) -> str:
        return f"{cls.__name__}:{title}"


class SyncCallable:
    def __call__(self, title: str) -> str:
        return "sync-call:" + title


def scale(factor: int, title: str, /, *, suffix: str) -> str:
    return f"{title * factor}{suffix}"


def positional_only(title: str, /) -> str:
    return "po:" + title


service = Service("svc:")


async def every_kind(
    title: str,
    stock: Annotated[Stock, Resolve(Stock, inline=True)],
    bound: Annotated[str, Resolve(service.lookup, inline=True)],
    bound_again: Annotated[str, Resolve(service.lookup, inline=True)],
    instance: Annotated[str, Resolve(service)],
    sync_instance: Annotated[str, Resolve(SyncCallable(), inline=True)],
    static: Annotated[str, Resolve(Service.static, inline=True)],
    klass: Annotated[str, Resolve(Service.klass, inline=True)],
    partial: Annotated[str, Resolve(functools.partial(scale, 2, suffix="!"), inline=True)],
    po: Annotated[str, Resolve(positional_only, inline=True)],
) -> list[Any]:
    return [stock.title, bound, bound_again, instance, sync_instance, static, klass, partial, po]


async def test_classes_instances_methods_partials_and_positional_only_resolvers_work() -> None:
    plan = compile_plan(every_kind)
    assert await plan.run({"title": "ab"}) == [
        "ab",
        "svc:ab",
        "svc:ab",
        "call:ab",
        "sync-call:ab",
        "static:ab",
        "Service:ab",
        "abab!",
        "po:ab",
    ]
    names = [step.name for step in plan.steps]
    assert names.count("Service.lookup") == 1, "svc.lookup referenced twice is one step"
    is_async = {step.name: step.is_async for step in plan.steps}
    assert is_async["Service"] is True
    assert is_async["SyncCallable"] is False
    assert is_async["Stock"] is False


async def test_two_instances_of_one_class_are_two_steps_with_distinct_keys() -> None:
    a, b = Service("a:"), Service("b:")

    async def tool(
        title: str,
        x: Annotated[str, Resolve(a.lookup, inline=True)],
        y: Annotated[str, Resolve(b.lookup, inline=True)],
    ) -> str:
        return x + y

    plan = compile_plan(tool, localns=locals())
    assert await plan.run({"title": "t"}) == "a:tb:t"
    assert len(plan.steps) == 2
    assert plan.steps[0].key != plan.steps[1].key


async def test_a_partial_keeps_the_annotations_of_the_function_it_wraps() -> None:
    def wants_stock(stock: Annotated[int, Resolve(check_stock)], factor: int) -> int:
        return stock * factor

    async def tool(
        title: str, n: Annotated[int, Resolve(functools.partial(wants_stock, factor=3), inline=True)]
    ) -> int:
        return n

    plan = compile_plan(tool, localns=locals())
    assert await plan.run({"title": "abc"}) == 9


@dataclass
class Settings:
    title: str
    ctx: Context


async def test_a_class_resolver_takes_its_hints_from_init() -> None:
    async def tool(settings: Annotated[Settings, Resolve(Settings, inline=True)], title: str) -> str:
        return settings.title + settings.ctx.user

    plan = compile_plan(tool, context_types=(Context,), localns=locals())
    assert await plan.run({"title": "t"}, {Context: Context("u")}) == "tu"


class Boom(Exception):
    pass


async def explode(title: str) -> int:
    raise Boom("no stock for " + title)


async def never_runs() -> str:
    raise AssertionError("the root does not run after a resolver failed")


async def tool_that_fails(title: str, stock: Annotated[int, Resolve(explode)]) -> str:
    return await never_runs()


async def test_a_resolver_exception_stops_the_round_and_surfaces_as_resolver_error_naming_it() -> None:
    plan = compile_plan(tool_that_fails)
    with pytest.raises(ResolverError) as error:
        await plan.run({"title": "Dune"})
    assert str(error.value) == "Resolver 'explode' (for parameter 'stock') raised Boom: no stock for Dune"
    assert isinstance(error.value.__cause__, Boom)
    assert error.value.step.name == "explode"
    assert error.value.parameter == "stock"


async def test_an_exception_in_the_root_propagates_unchanged() -> None:
    async def tool(stock: Annotated[int, Resolve(check_stock)], title: str) -> int:
        raise Boom("body")

    plan = compile_plan(tool, localns=locals())
    with pytest.raises(Boom):
        await plan.run({"title": "x"})


async def test_call_returns_the_result_when_nothing_asks() -> None:
    plan = compile_plan(reserve_book)
    assert await plan.call({"title": "Dune"}) == "Dune: 4 in stock"
    assert UnansweredQuestion is not None


async def test_inline_makes_no_difference_to_an_async_resolver() -> None:
    async def tool(
        title: str,
        a: Annotated[int, Resolve(check_stock)],
        b: Annotated[int, Resolve(check_stock, inline=True)],
    ) -> int:
        return a + b

    plan = compile_plan(tool, localns=globals())
    assert await plan.run({"title": "abc"}) == 6


async def test_a_partial_root_and_a_callable_instance_root_compile_and_run() -> None:
    async def tool(prefix: str, title: str, stock: Annotated[int, Resolve(check_stock)]) -> str:
        return f"{prefix}{title}{stock}"

    plan = compile_plan(functools.partial(tool, "p:"), localns=globals())
    assert plan.name == "partial(tool)"
    assert [a.name for a in plan.arguments] == ["title"]
    assert await plan.run({"title": "ab"}) == "p:ab2"
    plan = compile_plan(service)
    assert plan.is_async
    assert await plan.run({"title": "x"}) == "call:x"


async def test_running_reads_no_signature_and_no_type_hint_after_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspect
    import typing

    plan = compile_plan(diamond)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("inspected at run time")

    monkeypatch.setattr(inspect, "signature", forbidden)
    monkeypatch.setattr(typing, "get_type_hints", forbidden)
    assert await plan.run({"title": "x"}) == "LX RX X"
    assert "async def run(" in plan.source
