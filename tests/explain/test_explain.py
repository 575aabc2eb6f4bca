"""Explaining a tool's graph: what each resolver reads, who asks what, and the worst-case rounds."""
# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Context, Elicit, InvalidSignature, ListRoots, MCPServer, Resolve
from mcpdi.engine import compile_plan, explain, explanation_json, render_mermaid, render_text
from mcpdi.types import ListRootsResult

EXAMPLES = Path(__file__).parents[2] / "examples"


def bookshop() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bookshop", EXAMPLES / "bookshop.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_order_book_as_text_names_its_question_capability_and_rounds() -> None:
    (order_book,) = bookshop().mcp.explain("order_book")
    assert render_text(order_book) == snapshot(
        """\
tool order_book (examples/bookshop.py:54)
arguments: title
worst-case rounds: 1
client capabilities: elicitation
1. check_stock (examples/bookshop.py:29) async, scope round
     title <- argument title
2. confirm_backorder (examples/bookshop.py:37) async, scope round, asks elicitation/create (round 1)
     title <- argument title
     stock <- resolver check_stock
order_book
     title <- argument title
     stock <- resolver check_stock
     backorder <- resolver confirm_backorder\
"""
    )


def test_order_book_as_mermaid_draws_asking_resolvers_as_hexagons() -> None:
    (order_book,) = bookshop().mcp.explain("order_book")
    assert render_mermaid([order_book]) == snapshot(
        """\
flowchart TD
    arg_title[/"title"/]
    rbc43e4cb19["check_stock<br/>scope round"]
    r945f2b6bd7{{"confirm_backorder<br/>scope round<br/>asks elicitation/create (round 1)"}}
    root(["order_book<br/>worst-case rounds: 1"])
    arg_title --> rbc43e4cb19
    arg_title --> r945f2b6bd7
    rbc43e4cb19 -->|stock| r945f2b6bd7
    arg_title --> root
    rbc43e4cb19 -->|stock| root
    r945f2b6bd7 -->|backorder| root\
"""
    )


def test_the_json_shape_lists_tools_resolvers_reads_and_rounds() -> None:
    shop = bookshop().mcp
    body = json.loads(explanation_json(shop.explain(), server=shop.name))
    assert body["server"] == "Bookshop"
    assert [tool["name"] for tool in body["tools"]] == [
        "reserve_book",
        "order_book",
        "order_or_suggest",
        "delivery_estimate",
        "stock_in_region",
    ]
    order_book = body["tools"][1]
    assert set(order_book) == {
        "name",
        "location",
        "arguments",
        "resolvers",
        "reads",
        "capabilities",
        "worstCaseRounds",
    }
    confirm = order_book["resolvers"][1]
    assert (confirm["name"], confirm["asks"], confirm["round"]) == (
        "confirm_backorder",
        ["elicitation/create"],
        1,
    )
    assert {"parameter": "stock", "source": "resolved", "from": order_book["resolvers"][0]["key"]} in confirm[
        "reads"
    ]
    region = body["tools"][4]
    assert region["arguments"] == [{"name": "title", "header": None}, {"name": "region", "header": "Region"}]


class Size(BaseModel):
    size: int


class Colour(BaseModel):
    colour: str


def pick_size() -> Elicit[Size]:
    return Elicit("Size?", Size)


def pick_colour(size: Annotated[Size, Resolve(pick_size)]) -> Elicit[Colour]:
    return Elicit(f"Colour for size {size.size}?", Colour)


def find_folder(colour: Annotated[Colour, Resolve(pick_colour)], ctx: Context) -> ListRoots:
    return ListRoots()


def price(size: Annotated[Size, Resolve(pick_size)]) -> int:
    return size.size * 2


def order(
    price: Annotated[int, Resolve(price)],
    folder: Annotated[ListRootsResult, Resolve(find_folder)],
) -> str:
    return f"{price} into {folder.roots[0].uri}"


def test_the_worst_case_is_the_longest_chain_of_dependent_questions() -> None:
    mcp = MCPServer("Tailor")
    mcp.tool()(order)
    (explained,) = mcp.explain("order")
    assert explained.worst_case_rounds == 3
    assert [(node.name, node.asks, node.round) for node in explained.nodes] == [
        ("pick_size", ("elicitation/create",), 1),
        ("price", (), None),  # it cannot ask: it waits for the answer to pick_size's question
        ("pick_colour", ("elicitation/create",), 2),
        ("find_folder", ("roots/list",), 3),
    ]
    assert explained.capabilities == ("elicitation", "roots")
    assert explained.nodes[3].inputs[1].source == "context"


def test_max_rounds_refuses_a_graph_that_can_ask_longer() -> None:
    mcp = MCPServer("Tailor")
    with pytest.raises(InvalidSignature) as caught:
        mcp.tool(max_rounds=2)(order)
    message = re.sub(r"tests/explain/test_explain\.py:\d+", "HERE", str(caught.value))
    assert message == snapshot(
        "Tool 'order' (HERE) can ask in 3 rounds, over max_rounds=2: each of pick_size (HERE) -> pick_colour (HERE) -> find_folder (HERE) asks after the one before has its answer. Ask for several fields in one Elicit form, make a resolver independent of an earlier answer, put resolvers that cannot ask after the questions, or raise max_rounds."
    )
    with pytest.raises(KeyError):
        mcp.registered_tool("order")


def test_max_rounds_accepts_a_graph_within_it_and_rejects_nonsense() -> None:
    mcp = MCPServer("Tailor")
    mcp.tool(max_rounds=3)(order)
    assert mcp.registered_tool("order").plan.name == "order"
    with pytest.raises(InvalidSignature, match="max_rounds must be a whole number of rounds"):
        mcp.tool(name="again", max_rounds=-1)(order)


def test_plain_engine_plans_explain_their_question_classes() -> None:
    plan = compile_plan(order, context_types=(Context,))
    explained = explain(plan)
    assert [node.asks for node in explained.nodes] == [("Elicit",), (), ("Elicit",), ("ListRoots",)]
    assert explained.worst_case_rounds == 3
    assert explained.capabilities == ()


def test_an_unannotated_resolver_counts_as_asking() -> None:
    def anything(title: str) -> Any:
        return title

    def tool(title: str, value: Annotated[str, Resolve(anything)]) -> str:
        return value

    explained = explain(compile_plan(tool, localns={"anything": anything}))
    assert explained.nodes[0].asks == ("a question",)
    assert explained.worst_case_rounds == 1


def test_questions_of_locally_defined_resolvers_are_named() -> None:
    class Note(BaseModel):
        text: str

    def ask_note() -> Note | Elicit[Note]:
        return Elicit("A note?", Note)

    mcp = MCPServer("Local")

    @mcp.tool()
    def leave(note: Annotated[Note, Resolve(ask_note)]) -> str:
        return note.text

    (explained,) = mcp.explain("leave")
    assert explained.nodes[0].asks == ("elicitation/create",)
    assert explained.capabilities == ("elicitation",)


def ask_gift() -> Elicit[Colour]:
    return Elicit("Wrapping colour?", Colour)


def reserve(size: Annotated[Size, Resolve(pick_size)]) -> str:
    return f"reserved {size.size}"


def test_a_resolver_that_cannot_ask_between_two_questions_puts_the_second_in_a_later_round() -> None:
    def apart(
        size: Annotated[Size, Resolve(pick_size)],
        held: Annotated[str, Resolve(reserve)],
        gift: Annotated[Colour, Resolve(ask_gift)],
    ) -> str:
        return held

    def together(
        size: Annotated[Size, Resolve(pick_size)],
        gift: Annotated[Colour, Resolve(ask_gift)],
        held: Annotated[str, Resolve(reserve)],
    ) -> str:
        return held

    mcp = MCPServer("Tailor")
    mcp.tool()(together)
    (explained,) = mcp.explain("together")
    assert [(node.name, node.round) for node in explained.nodes] == [
        ("pick_size", 1),
        ("ask_gift", 1),
        ("reserve", None),
    ]
    assert explained.worst_case_rounds == 1
    with pytest.raises(InvalidSignature) as caught:
        mcp.tool(max_rounds=1)(apart)
    message = re.sub(r"tests/explain/test_explain\.py:\d+", "HERE", str(caught.value))
    assert message == snapshot(
        "Tool 'apart' (HERE) can ask in 2 rounds, over max_rounds=1: each of pick_size (HERE) -> ask_gift (HERE) asks after the one before has its answer. Ask for several fields in one Elicit form, make a resolver independent of an earlier answer, put resolvers that cannot ask after the questions, or raise max_rounds."
    )


async def opened_connection() -> Any:
    yield "connection"


def test_an_async_generator_resolver_is_explained_as_async() -> None:
    mcp = MCPServer("Cleanup")

    @mcp.tool()
    def use(conn: Annotated[str, Resolve(opened_connection)]) -> str:
        return conn

    (explanation,) = mcp.explain("use")
    assert [node.is_async for node in explanation.nodes] == [True]
    assert "async, scope round" in render_text(explanation)
