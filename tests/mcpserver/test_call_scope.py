"""Call-scoped values: computed once per call, carried to later rounds in the sealed state."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from typing import Annotated, Any

import mcp_types as types
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Elicit, InvalidSignature, MCPServer, Resolve

pytestmark = pytest.mark.anyio

ERAS = ("2025-11-25", "2026-07-28")


class Confirm(BaseModel):
    sure: bool


class Quote(BaseModel):
    price: int
    currency: str


def shop() -> tuple[MCPServer, list[int]]:
    mcp = MCPServer("Shop")
    quotes: list[int] = []

    def quote() -> Quote:
        quotes.append(100 + len(quotes))  # a price that changes every time it is asked for
        return Quote(price=quotes[-1], currency="EUR")

    def confirm(q: Annotated[Quote, Resolve(quote, scope="call")]) -> Elicit[Confirm]:
        return Elicit(f"Pay {q.price} {q.currency}?", Confirm)

    @mcp.tool()
    def buy(
        q: Annotated[Quote, Resolve(quote, scope="call")], ok: Annotated[Confirm, Resolve(confirm)]
    ) -> str:
        return f"paid {q.price} {q.currency}"

    return mcp, quotes


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_scoped_value_is_computed_once_for_the_whole_call(era: str) -> None:
    mcp, quotes = shop()
    asked: list[str] = []

    def answer(method: str, params: Any) -> Any:
        asked.append(params["message"])
        return {"action": "accept", "content": {"sure": True}}

    result = await mcp.call_tool("buy", answers=answer, protocol_version=era)
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "paid 100 EUR"
    assert quotes == [100]
    assert asked == ["Pay 100 EUR?"]


def text_of(error: pytest.ExceptionInfo[InvalidSignature]) -> str:
    return re.sub(r"\.py:\d+", ".py:N", str(error.value))


def test_a_call_scoped_resolver_needs_a_return_type_pydantic_can_carry() -> None:
    mcp = MCPServer("Shop")

    def unannotated():  # type: ignore[no-untyped-def]
        return 1

    class Opaque:
        pass

    def opaque() -> Opaque:
        return Opaque()

    def anything() -> object:
        return object()

    texts: list[str] = []
    for resolver in (unannotated, opaque, anything):
        with pytest.raises(InvalidSignature) as error:

            @mcp.tool()
            def tool(v: Annotated[Any, Resolve(resolver, scope="call")]) -> str:
                return "x"

        texts.append(text_of(error))
    assert texts == snapshot(
        [
            "Resolver 'unannotated' (tests/mcpserver/test_call_scope.py:N) is call-scoped but has no return annotation; its value is carried to later rounds as JSON, checked against that annotation. Annotate what it returns, e.g. `-> int`.",
            "Resolver 'opaque' (tests/mcpserver/test_call_scope.py:N) is call-scoped, but its return type test_a_call_scoped_resolver_needs_a_return_type_pydantic_can_carry.<locals>.Opaque cannot be carried to later rounds: pydantic has no schema for it. Return a model, dataclass or JSON-like value, or keep the default scope.",
            "Resolver 'anything' (tests/mcpserver/test_call_scope.py:N) is call-scoped but returns `object`; its value is carried to later rounds as JSON, checked against the return annotation, and `object` can be anything. Annotate what it returns, e.g. `-> int`.",
        ]
    )
