"""Checks, questions and effects in the order the author wrote them, written against the SDK."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

mcp = MCPServer("Orders")
EVENTS: list[str] = []  # what the resolvers did, in order, across one scenario


class Confirm(BaseModel):
    ok: bool


class Seat(BaseModel):
    row: int


class Meal(BaseModel):
    meal: str


async def check_stock(title: str) -> int:
    EVENTS.append(f"check {title}")
    if title == "Emma":
        raise ToolError(f"{title} is out of stock")
    return 3


async def confirm_order(title: str) -> Elicit[Confirm]:
    return Elicit(f"Order {title}?", Confirm)


async def charge_card(title: str) -> str:
    EVENTS.append(f"charge {title}")
    return "tx-1"


@mcp.tool()
async def order(
    title: str,
    stock: Annotated[int, Resolve(check_stock)],
    sure: Annotated[Confirm, Resolve(confirm_order)],
) -> str:
    return f"ordered {title} ({stock} in stock)"


@mcp.tool()
async def pay(
    title: str,
    sure: Annotated[Confirm, Resolve(confirm_order)],
    tx: Annotated[str, Resolve(charge_card)],
) -> str:
    return f"paid {title} with {tx}"


async def ask_seat() -> Elicit[Seat]:
    return Elicit("Which row?", Seat)


async def ask_meal() -> Elicit[Meal]:
    return Elicit("Which meal?", Meal)


@mcp.tool()
async def board(
    seat: Annotated[Seat, Resolve(ask_seat)],
    meal: Annotated[Meal, Resolve(ask_meal)],
) -> str:
    return f"row {seat.row}, {meal.meal}"
