"""`describe_plan`: the JSON the page draws a tool's resolver graph from."""

from __future__ import annotations

from typing import Annotated

from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import Context, Elicit, MCPServer, Resolve
from mcpdi_transport._dev._graph import describe_plan


def who_asks(ctx: Context) -> str:
    return "someone"


class Ok(BaseModel):
    ok: bool


def confirm(who: Annotated[str, Resolve(who_asks)]) -> Ok | Elicit[Ok]:
    return Ok(ok=True)


def build() -> MCPServer:
    mcp = MCPServer("Graph")

    @mcp.tool()
    def plain(title: str, copies: int = 1) -> str:
        return title * copies

    @mcp.tool()
    def shared(
        title: str,
        ctx: Context,
        who: Annotated[str, Resolve(who_asks)],
        ok: Annotated[Ok, Resolve(confirm)],
    ) -> str:
        return title

    return mcp


def summary(tool: str) -> tuple[list[tuple[str, str, bool]], list[tuple[str, str, str]]]:
    graph = describe_plan(build().registered_tool(tool).plan)
    labels = {node["id"]: node["label"] for node in graph["nodes"]}
    nodes = [(node["kind"], node["label"], node["asks"]) for node in graph["nodes"]]
    edges = [(labels[e["source"]], e["parameter"], labels[e["target"]]) for e in graph["edges"]]
    return nodes, edges


def test_a_tool_without_resolvers_is_its_arguments_pointing_at_it() -> None:
    assert summary("plain") == snapshot(
        (
            [("argument", "title", False), ("argument", "copies", False), ("tool", "plain", False)],
            [("title", "title", "plain"), ("copies", "copies", "plain")],
        )
    )


def test_a_context_value_is_one_node_however_many_take_it_and_a_shared_resolver_appears_once() -> None:
    assert summary("shared") == snapshot(
        (
            [
                ("argument", "title", False),
                ("resolver", "who_asks", False),
                ("resolver", "confirm", True),
                ("context", "Context", False),
                ("tool", "shared", False),
            ],
            [
                ("Context", "ctx", "who_asks"),
                ("who_asks", "who", "confirm"),
                ("title", "title", "shared"),
                ("Context", "ctx", "shared"),
                ("who_asks", "who", "shared"),
                ("confirm", "ok", "shared"),
            ],
        )
    )


def test_every_edge_joins_two_nodes_of_the_graph() -> None:
    graph = describe_plan(build().registered_tool("shared").plan)
    ids = {node["id"] for node in graph["nodes"]}
    assert len(ids) == len(graph["nodes"])
    assert all(edge["source"] in ids and edge["target"] in ids for edge in graph["edges"])
