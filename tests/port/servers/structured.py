"""Every return kind whose output the reference SDK structures, written against the SDK."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Optional, TypedDict

from mcp.server.mcpserver import Audio, Image, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

mcp = MCPServer("Structured")


class Weather(BaseModel):
    city: str
    celsius: float = Field(alias="temperatureC")


class Totals(TypedDict):
    """Order totals."""

    net: int
    currency: str


class Partial(TypedDict, total=False):
    note: str


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Annotated_:
    label: str
    size: int = 1

    def __init__(self, label: str) -> None:
        self.label = label

    def __str__(self) -> str:  # the text block shows it; a default repr would differ per process
        return f"Annotated_({self.label})"


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Opaque:
    def __init__(self) -> None:
        self.secret = "kept"

    def __str__(self) -> str:
        return "opaque"


@mcp.tool()
def model() -> Weather:
    """A pydantic model."""
    return Weather(city="Oslo", temperatureC=3.5)


@mcp.tool()
def typed_dict() -> Totals:
    return {"net": 12, "currency": "EUR"}


@mcp.tool()
def partial_typed_dict() -> Partial:
    return {}


@mcp.tool()
def dataclass() -> Point:
    return Point(2)


@mcp.tool()
def annotated_class() -> Annotated_:
    return Annotated_("box")


@mcp.tool()
def tree() -> Node:
    return Node(name="root", children=[Node(name="leaf")])


@mcp.tool()
def integer() -> int:
    return 7


@mcp.tool()
def floating() -> float:
    return 2.5


@mcp.tool()
def string() -> str:
    return "plain"


@mcp.tool()
def boolean() -> bool:
    return False


@mcp.tool()
def nothing() -> None:
    return None


@mcp.tool()
def numbers() -> list[int]:
    return [1, 2, 3]


@mcp.tool()
def mapping() -> dict[str, float]:
    return {"a": 1.5}


@mcp.tool()
def keyed_by_int() -> dict[int, str]:
    return {1: "one"}


@mcp.tool()
def optional() -> Optional[int]:  # noqa: UP045  # the spelling ported servers use
    return None


@mcp.tool()
def choice() -> Literal["red", "green"]:
    return "green"


@mcp.tool()
def either() -> int | str:
    return "text"


@mcp.tool()
def pair() -> tuple[int, str]:
    return (1, "a")


@mcp.tool()
def models() -> list[Weather]:
    return [Weather(city="Rome", temperatureC=20)]


@mcp.tool()
def opaque() -> Opaque:
    return Opaque()


@mcp.tool()
def untyped():  # pyright: ignore[reportUnknownParameterType]
    return {"free": "form"}


@mcp.tool()
def anything() -> Any:
    return [1, "x"]


@mcp.tool(structured_output=False)
def unstructured() -> Totals:
    return {"net": 1, "currency": "USD"}


@mcp.tool()
def block() -> TextContent:
    return TextContent(type="text", text="a block")


@mcp.tool()
def picture() -> Image:
    return Image(data=b"\x89PNG", format="png")


@mcp.tool()
def sound() -> Audio:
    return Audio(data=b"RIFF")


@mcp.tool()
def gallery() -> list[Image | str]:
    return [Image(data=b"GIF8", format="gif"), "caption"]


@mcp.tool()
def hand_built() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="mine")], structured_content={"k": 1})
