"""FastAPI's `solve_dependencies` on a `get_dependant(tool)`, then `run_endpoint_function`.

The two calls FastAPI's request handler makes, fed a starlette `Request` built from an
ASGI scope whose query string carries the tool argument (encoded once, as a request
arrives encoded); resolvers read `title` as a query parameter, which FastAPI validates.
FastAPI runs every sync dependency and sync endpoint in its threadpool.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any
from urllib.parse import urlencode

from benchmarks.graphs import TITLE, Graph, Node, Variant, execute, render
from benchmarks.peers import Built, Impl, Unavailable


def build(graph: Graph, variant: Variant) -> Built | Unavailable:
    if variant == "sync-inline":
        return Unavailable("FastAPI runs sync dependencies and endpoints in its threadpool")
    from fastapi import Depends
    from fastapi.dependencies.utils import get_dependant, solve_dependencies
    from fastapi.routing import run_endpoint_function
    from starlette.requests import Request

    def param(_consumer: Node | None, value: str) -> str:
        if value == TITLE:
            return "title: str"
        dep = graph.node(value)
        return f"{value}: {dep.type} = Depends({dep.fn})"

    source = render(graph, is_async=variant == "async", param=param)
    scope = execute(source, {"Depends": Depends}, "bench_fastapi")
    tool = scope["tool"]
    dependant = get_dependant(path="/tool", call=tool)
    is_coroutine = inspect.iscoroutinefunction(tool)
    query = urlencode(dict(graph.arguments)).encode()

    async def call(arguments: Mapping[str, Any]) -> Any:
        async with AsyncExitStack() as inner, AsyncExitStack() as function_stack:
            request = Request(
                {
                    "type": "http",
                    "method": "POST",
                    "path": "/tool",
                    "query_string": query,
                    "headers": [],
                    "fastapi_inner_astack": inner,
                    "fastapi_function_astack": function_stack,
                }
            )
            solved = await solve_dependencies(
                request=request, dependant=dependant, async_exit_stack=inner, embed_body_fields=False
            )
            if solved.errors:
                msg = f"FastAPI could not solve the graph: {solved.errors}"
                raise RuntimeError(msg)
            return await run_endpoint_function(
                dependant=dependant, values=solved.values, is_coroutine=is_coroutine
            )

    return Built(call)


IMPL = Impl("fastapi", build)
