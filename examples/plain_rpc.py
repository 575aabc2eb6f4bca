"""A tiny JSON-RPC dispatcher without MCP: handlers whose parameters are filled by resolvers.

Run it with `python examples/plain_rpc.py`; it prints a short transcript. A method whose
resolver asks a question answers `input_required` with the questions; the caller sends the
same request again with `answers` keyed by question key, echoing each question's digest.
The catalogue is an app-scoped resource: opened on first use, shared by every request, and
closed when the dispatcher shuts down.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Annotated, Any

from mcpdi.engine import (
    Answer,
    AppScope,
    MissingArgument,
    NeedsInput,
    Plan,
    Question,
    Resolve,
    ResolverError,
    compile_plan,
)

INVENTORY = {"Dune": 3, "Emma": 0}


class Confirm(Question):
    """A yes/no question for the caller."""

    def __init__(self, message: str) -> None:
        self.message = message

    def render(self) -> Mapping[str, Any]:
        return {"kind": "confirm", "message": self.message}

    def resolve_answer(self, payload: Any) -> bool:
        return payload is True


async def catalogue() -> AsyncIterator[Mapping[str, int]]:
    """An app-scoped resource: what comes after `yield` runs when the dispatcher shuts down."""
    print("-- catalogue opened")
    yield INVENTORY
    print("-- catalogue closed")


async def stock_of(title: str, books: Annotated[Mapping[str, int], Resolve(catalogue, scope="app")]) -> int:
    if title not in books:
        msg = f"unknown title {title!r}"
        raise LookupError(msg)
    return books[title]


def confirm_backorder(title: str, stock: Annotated[int, Resolve(stock_of)]) -> bool | Confirm:
    if stock > 0:
        return False
    return Confirm(f"{title} is out of stock. Order it anyway?")


async def check(title: str, stock: Annotated[int, Resolve(stock_of)]) -> dict[str, Any]:
    return {"title": title, "in_stock": stock}


async def order(
    title: str,
    qty: int,
    stock: Annotated[int, Resolve(stock_of)],
    backorder: Annotated[bool, Resolve(confirm_backorder, inline=True)],
) -> dict[str, Any]:
    if stock == 0 and not backorder:
        return {"title": title, "ordered": 0}
    return {"title": title, "ordered": qty, "backorder": backorder}


METHODS: dict[str, Plan] = {"books.check": compile_plan(check), "books.order": compile_plan(order)}
APP = AppScope()  # the dispatcher's app-scoped values; closed at shutdown


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request in, one response out."""
    request_id = request.get("id")
    plan = METHODS.get(request.get("method", ""))
    if plan is None:
        return error(request_id, -32601, f"Method not found: {request.get('method')}")
    params = request.get("params", {})
    answers = {key: Answer(a["digest"], a["value"]) for key, a in params.get("answers", {}).items()}
    try:
        result = await plan.run(params.get("arguments", {}), {AppScope: APP}, answers)
    except MissingArgument as missing:
        return error(request_id, -32602, str(missing))
    except ResolverError as failed:
        return error(request_id, -32000, f"{failed.step.name} failed: {failed.__cause__}")
    if isinstance(result, NeedsInput):
        questions = {
            asked.key: {"digest": asked.digest, "question": dict(asked.question.render())}
            for asked in result.questions
        }
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"status": "input_required", "questions": questions},
        }
    return {"jsonrpc": "2.0", "id": request_id, "result": {"status": "complete", "value": result}}


async def transcript() -> None:
    async def call(request: dict[str, Any]) -> dict[str, Any]:
        print("->", json.dumps(request))
        response = await handle(request)
        print("<-", json.dumps(response))
        return response

    await call(
        {"jsonrpc": "2.0", "id": 1, "method": "books.check", "params": {"arguments": {"title": "Dune"}}}
    )
    arguments = {"title": "Emma", "qty": 1}
    first = await call(
        {"jsonrpc": "2.0", "id": 2, "method": "books.order", "params": {"arguments": arguments}}
    )
    answers = {key: {"digest": q["digest"], "value": True} for key, q in first["result"]["questions"].items()}
    await call(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "books.order",
            "params": {"arguments": arguments, "answers": answers},
        }
    )
    await call(
        {"jsonrpc": "2.0", "id": 4, "method": "books.check", "params": {"arguments": {"title": "Ulysses"}}}
    )
    await APP.aclose()


if __name__ == "__main__":
    asyncio.run(transcript())
