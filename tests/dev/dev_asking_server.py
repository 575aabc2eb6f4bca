"""A server for the dev page's tests: a resolver that samples, one that lists roots, a prompt, a resource."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpdi import Elicit, ListRoots, MCPServer, Resolve, Sample, ToolError
from mcpdi.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

mcp = MCPServer("Asking shop")


def suggest_title(genre: str) -> Sample:
    prompt = f"Suggest one {genre} book title. Answer with the title only."
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=50
    )


def shared_folders() -> ListRoots:
    return ListRoots()


@mcp.tool()
async def recommend_book(
    genre: str, suggestion: Annotated[CreateMessageResult, Resolve(suggest_title)]
) -> str:
    """Recommend a book in the given genre."""
    title = suggestion.content.text if suggestion.content.type == "text" else "the classics"
    return f"Today's {genre} pick: {title} (by {suggestion.model})"


@mcp.tool()
async def list_shelves(roots: Annotated[ListRootsResult, Resolve(shared_folders)]) -> str:
    """Name the folders the client shares."""
    return "Shelves: " + ", ".join(str(root.uri) for root in roots.roots)


@mcp.tool()
def hold_copies(count: int) -> dict[str, int]:
    """Put copies aside; at most three."""
    if count > 3:
        msg = f"cannot hold {count} copies; at most 3"
        raise ToolError(msg)
    return {"held": count}


class Wrapping(BaseModel):
    paper: Literal["red", "green", "gold"] = Field(description="Paper colour")
    ribbons: int = Field(ge=0, le=5)
    card: bool = False
    note: str = ""


def ask_wrapping(title: str) -> Elicit[Wrapping]:
    return Elicit(f"How should {title!r} be wrapped?", Wrapping)


@mcp.tool()
def gift_wrap(title: str, wrapping: Annotated[Wrapping, Resolve(ask_wrapping)]) -> str:
    """Wrap a book as a gift."""
    card = f", a card saying {wrapping.note!r}" if wrapping.card else ""
    return f"{title} wrapped in {wrapping.paper} with {wrapping.ribbons} ribbon(s){card}."


@mcp.prompt()
def review(title: str) -> str:
    """Ask for a short review of a book."""
    if not title.strip():
        msg = "a review needs a title"
        raise ValueError(msg)
    return f"Write a two-line review of {title}."


@mcp.resource("books://catalogue")
def catalogue() -> str:
    """Every title in the shop."""
    return "Dune\nNeuromancer"
