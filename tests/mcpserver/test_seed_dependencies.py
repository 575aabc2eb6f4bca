"""Every example of the dependencies page, in both protocol eras, with the page's outputs."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from mcpdi import Elicit, ElicitationResult, ListRoots, MCPServer, Resolve, Sample
from mcpdi.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

from .conftest import answers, connect

pytestmark = pytest.mark.anyio

INVENTORY = {"Dune": 7, "Neuromancer": 0}


class Stock(BaseModel):
    title: str
    copies: int


def recording_check_stock(calls: list[str]) -> Callable[[str], Awaitable[Stock]]:
    """The page's `check_stock`, also noting in `calls` each title it looks up."""

    async def check_stock(title: str) -> Stock:
        calls.append(title)
        return Stock(title=title, copies=INVENTORY.get(title, 0))

    return check_stock


def reserve_server(calls: list[str]) -> MCPServer:
    mcp = MCPServer("Bookshop")

    check_stock = recording_check_stock(calls)

    @mcp.tool()
    async def reserve_book(title: str, stock: Annotated[Stock, Resolve(check_stock)]) -> str:
        """Reserve a copy of a book."""
        if stock.copies == 0:
            return f"{title!r} is out of stock."
        return f"Reserved {title!r} ({stock.copies - 1} copies left)."

    return mcp


async def test_reserve_book_lists_only_the_title_argument(protocol_version: str) -> None:
    async with connect(reserve_server([]), protocol_version) as client:
        listing = await client.send("tools/list")
    (tool,) = listing["result"]["tools"]
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {"title": {"title": "Title", "type": "string"}},
        "required": ["title"],
        "title": "reserve_bookArguments",
    }
    assert tool["description"] == "Reserve a copy of a book."


async def test_reserve_book_reserves_dune_from_the_resolved_stock(protocol_version: str) -> None:
    calls: list[str] = []
    async with connect(reserve_server(calls), protocol_version) as client:
        call = await client.call_tool("reserve_book", {"title": "Dune"})
    assert call.text == "Reserved 'Dune' (6 copies left)."
    assert call.result["structuredContent"] == {"result": "Reserved 'Dune' (6 copies left)."}
    assert call.result.get("isError") is not True
    assert calls == ["Dune"]


async def test_a_client_value_for_the_resolved_parameter_is_ignored(protocol_version: str) -> None:
    async with connect(reserve_server([]), protocol_version) as client:
        call = await client.call_tool(
            "reserve_book", {"title": "Neuromancer", "stock": {"title": "x", "copies": 99}}
        )
    assert call.text == "'Neuromancer' is out of stock."


async def test_invalid_arguments_fail_before_any_resolver_runs(protocol_version: str) -> None:
    calls: list[str] = []
    async with connect(reserve_server(calls), protocol_version) as client:
        call = await client.call_tool("reserve_book", {"title": 42})
    assert call.result["isError"] is True
    assert call.text.startswith(
        "Error executing tool reserve_book: 1 validation error for reserve_bookArguments"
    )
    assert calls == []


def delivery_server(calls: list[str]) -> MCPServer:
    mcp = MCPServer("Bookshop")

    check_stock = recording_check_stock(calls)

    async def estimate_delivery(stock: Annotated[Stock, Resolve(check_stock)]) -> str:
        return "tomorrow" if stock.copies > 0 else "in 2-3 weeks"

    @mcp.tool()
    async def order_book(
        title: str,
        stock: Annotated[Stock, Resolve(check_stock)],
        delivery: Annotated[str, Resolve(estimate_delivery)],
    ) -> str:
        """Order a book from the shop."""
        if stock.copies == 0:
            return f"{title!r} is on backorder; it would arrive {delivery}."
        return f"Ordered {title!r}; it arrives {delivery}."

    return mcp


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Dune", "Ordered 'Dune'; it arrives tomorrow."),
        ("Neuromancer", "'Neuromancer' is on backorder; it would arrive in 2-3 weeks."),
    ],
)
async def test_order_book_estimates_delivery_and_checks_stock_once(
    protocol_version: str, title: str, text: str
) -> None:
    calls: list[str] = []
    async with connect(delivery_server(calls), protocol_version) as client:
        call = await client.call_tool("order_book", {"title": title})
    assert call.text == text
    assert calls == [title]


class Backorder(BaseModel):
    confirm: bool = Field(description="Order anyway and wait?")


def backorder_server(calls: list[str], *, outcome: bool = False) -> MCPServer:
    mcp = MCPServer("Bookshop")

    check_stock = recording_check_stock(calls)

    async def confirm_backorder(
        title: str,
        stock: Annotated[Stock, Resolve(check_stock)],
    ) -> Backorder | Elicit[Backorder]:
        if stock.copies > 0:
            return Backorder(confirm=True)  # in stock: nothing to ask
        return Elicit(f"{title!r} is out of stock (2-3 weeks). Order anyway?", Backorder)

    if outcome:

        @mcp.tool(name="order_book")
        async def order_book_or_suggest(
            title: str,
            backorder: Annotated[ElicitationResult[Backorder], Resolve(confirm_backorder)],
        ) -> str:
            """Order a book from the shop."""
            if backorder.action != "accept":
                return f"No backorder for {title!r}; how about 'Dune'?"
            return f"Backordered {title!r}." if backorder.data.confirm else "No order placed."

        return mcp

    @mcp.tool()
    async def order_book(
        title: str,
        stock: Annotated[Stock, Resolve(check_stock)],
        backorder: Annotated[Backorder, Resolve(confirm_backorder)],
    ) -> str:
        """Order a book from the shop."""
        if not backorder.confirm:
            return "No order placed."
        if stock.copies == 0:
            return f"Backordered {title!r}; it ships in 2-3 weeks."
        return f"Ordered {title!r}."

    return mcp


async def test_in_stock_books_are_ordered_without_a_question(protocol_version: str) -> None:
    async with connect(backorder_server([]), protocol_version, script=answers()) as client:
        call = await client.call_tool("order_book", {"title": "Dune"})
    assert call.text == "Ordered 'Dune'."
    assert call.rounds == 1
    assert call.asked == []


@pytest.mark.parametrize(
    ("confirm", "text"),
    [(True, "Backordered 'Neuromancer'; it ships in 2-3 weeks."), (False, "No order placed.")],
)
async def test_out_of_stock_books_ask_the_person_first(
    protocol_version: str, confirm: bool, text: str
) -> None:
    script = answers(elicit={"action": "accept", "content": {"confirm": confirm}})
    calls: list[str] = []
    async with connect(backorder_server(calls), protocol_version, script=script) as client:
        call = await client.call_tool("order_book", {"title": "Neuromancer"})
    assert call.text == text
    ((method, params),) = call.asked
    assert method == "elicitation/create"
    assert params is not None
    assert params["message"] == "'Neuromancer' is out of stock (2-3 weeks). Order anyway?"
    assert params["mode"] == "form"
    schema = params["requestedSchema"]
    assert schema["properties"] == {
        "confirm": {"description": "Order anyway and wait?", "title": "Confirm", "type": "boolean"}
    }
    assert ("title" in schema) is (protocol_version < "2026-07-28")
    assert call.rounds == (2 if protocol_version >= "2026-07-28" else 1)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_question_aborts_the_call_with_the_parameter_name(
    protocol_version: str, action: str
) -> None:
    async with connect(
        backorder_server([]), protocol_version, script=answers(elicit={"action": action})
    ) as client:
        call = await client.call_tool("order_book", {"title": "Neuromancer"})
    assert call.result["isError"] is True
    assert call.text == (
        f"Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was {action}"
    )


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"action": "accept", "content": {"confirm": True}}, "Backordered 'Neuromancer'."),
        ({"action": "decline"}, "No backorder for 'Neuromancer'; how about 'Dune'?"),
        ({"action": "cancel"}, "No backorder for 'Neuromancer'; how about 'Dune'?"),
    ],
)
async def test_an_elicitation_result_consumer_branches_on_the_outcome(
    protocol_version: str, answer: dict[str, object], text: str
) -> None:
    async with connect(
        backorder_server([], outcome=True), protocol_version, script=answers(elicit=answer)
    ) as client:
        call = await client.call_tool("order_book", {"title": "Neuromancer"})
    assert call.text == text


async def test_an_elicitation_result_consumer_gets_plain_values_as_accepted(protocol_version: str) -> None:
    async with connect(backorder_server([], outcome=True), protocol_version, script=answers()) as client:
        call = await client.call_tool("order_book", {"title": "Dune"})
    assert call.text == "Backordered 'Dune'."


def recommend_server() -> MCPServer:
    mcp = MCPServer("Bookshop")

    def suggest_title(genre: str) -> Sample:
        prompt = f"Suggest one {genre} book title. Answer with the title only."
        return Sample(
            [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=50,
        )

    @mcp.tool()
    async def recommend_book(
        genre: str,
        suggestion: Annotated[CreateMessageResult, Resolve(suggest_title)],
    ) -> str:
        """Recommend a book in the given genre."""
        title = suggestion.content.text if suggestion.content.type == "text" else "the classics"
        return f"Today's {genre} pick: {title}"

    return mcp


SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Solaris"},
    "model": "m",
    "stopReason": "endTurn",
}


async def test_recommend_book_samples_the_clients_model(protocol_version: str) -> None:
    async with connect(recommend_server(), protocol_version, script=answers(sample=SAMPLED)) as client:
        call = await client.call_tool("recommend_book", {"genre": "science fiction"})
    assert call.text == "Today's science fiction pick: Solaris"
    assert call.asked == [
        (
            "sampling/createMessage",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": {
                            "type": "text",
                            "text": "Suggest one science fiction book title. Answer with the title only.",
                        },
                    }
                ],
                "maxTokens": 50,
            },
        )
    ]


async def test_list_roots_injects_the_clients_roots(protocol_version: str) -> None:
    mcp = MCPServer("Bookshop")

    def roots() -> ListRoots:
        return ListRoots()

    @mcp.tool()
    async def shelves(found: Annotated[ListRootsResult, Resolve(roots)]) -> list[str]:
        return [str(root.uri) for root in found.roots]

    script = answers(roots={"roots": [{"uri": "file:///home/ada/books", "name": "books"}]})
    async with connect(mcp, protocol_version, script=script) as client:
        call = await client.call_tool("shelves", {})
    assert call.result["structuredContent"] == {"result": ["file:///home/ada/books"]}
    assert call.asked == [("roots/list", None)]
