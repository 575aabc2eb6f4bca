"""Prompts, resources and templates with completion, written against the SDK."""

from __future__ import annotations

from mcp.server.mcpserver import AssistantMessage, Image, MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import Completion, PromptReference, ResourceTemplateReference

mcp = MCPServer("Library")

GENRES = ["fantasy", "fiction", "history", "horror"]


@mcp.prompt()
def review(title: str, tone: str = "kind") -> str:
    """Ask for a review of a book."""
    return f"Write a {tone} review of {title}."


@mcp.prompt(title="Book chat")
def chat(title: str) -> list[UserMessage | AssistantMessage]:
    return [UserMessage(f"Tell me about {title}"), AssistantMessage("Gladly. What would you like to know?")]


@mcp.prompt()
def cover(title: str) -> list[object]:
    return [f"The cover of {title}:", Image(data=b"\x89PNG", format="png")]


@mcp.prompt()
def broken() -> str:
    raise ValueError("the prompt crashed")


@mcp.resource("library://catalogue")
def catalogue() -> str:
    return "dune, emma"


@mcp.resource("library://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG"


@mcp.resource("library://stats")
def stats() -> dict[str, int]:
    return {"books": 2}


@mcp.resource("library://books/{genre}/{title}")
def book(genre: str, title: str) -> str:
    """A book by genre and title."""
    if genre not in GENRES:
        raise ResourceNotFoundError(f"no genre {genre}")
    if title == "banned":
        raise ResourceError(f"{title} is not lent out")
    if title == "crash":
        raise RuntimeError("disk on fire")
    return f"{title} ({genre})"


@mcp.completion()
async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    if isinstance(ref, ResourceTemplateReference) and argument.name == "genre":
        return Completion(values=[g for g in GENRES if g.startswith(argument.value)])
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "tone":
        return Completion(values=["kind", "harsh"], total=2, has_more=False)
    return None
