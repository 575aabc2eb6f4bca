"""Resolvers that ask the person, with a form model made by `create_model`, written against the SDK."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, create_model

mcp = MCPServer("Booking")

Seat = create_model("Seat", row=(int, ...), window=(bool, False))


class Confirm(BaseModel):
    ok: bool


def ask_seat() -> Elicit[Seat]:  # pyright: ignore[reportInvalidTypeForm]  # a create_model model
    return Elicit("Which seat?", Seat)


def confirm(flight: str) -> Elicit[Confirm]:
    return Elicit(f"Book {flight}?", Confirm)


@mcp.tool()
def book(
    flight: str,
    seat: Annotated[Seat, Resolve(ask_seat)],  # pyright: ignore[reportInvalidTypeForm]
    sure: Annotated[ElicitationResult[Confirm], Resolve(confirm)],
) -> str:
    if sure.action != "accept" or not sure.data.ok:
        return f"not booked ({sure.action})"
    return f"{flight}: row {seat.row}, window={seat.window}"  # pyright: ignore[reportAttributeAccessIssue]
