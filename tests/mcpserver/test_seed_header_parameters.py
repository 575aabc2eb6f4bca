"""The header-parameters page: marking arguments, what can be marked, the low-level server."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import httpx2
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel, Field, WithJsonSchema
from seed_lowlevel_server import IMPORTS, SCHEMA_BY_NAME, TOOL, run_seed

from mcpdi import Context, Header, InvalidSignature, MCPServer, Resolve, Server, ServerRequestContext
from mcpdi.testing import InMemoryClient
from mcpdi.types import ListToolsResult, PaginatedRequestParams, Tool

from .conftest import connect

pytestmark = pytest.mark.anyio


def marked(name: Any) -> Any:
    return Field(json_schema_extra={"x-mcp-header": name})


def bookshop() -> MCPServer:
    mcp = MCPServer("Bookshop")

    @mcp.tool()
    def check_stock(
        title: str,
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    ) -> str:
        """Count the copies of a book in one region's warehouses."""
        return f"{title}: 3 copies in {region}."

    return mcp


async def test_a_marked_argument_is_published_and_still_arrives_as_an_argument(protocol_version: str) -> None:
    mcp = bookshop()
    async with connect(mcp, protocol_version) as client:
        listing = await client.send("tools/list")
        call = await client.call_tool("check_stock", {"title": "Dune", "region": "EU"})
        schema = await client.runner.tool_input_schema("check_stock")
    assert listing["result"]["tools"][0]["inputSchema"]["properties"]["region"] == {
        "title": "Region",
        "type": "string",
        "x-mcp-header": "Region",
    }
    assert call.text == "Dune: 3 copies in EU."
    assert schema == listing["result"]["tools"][0]["inputSchema"]


def test_the_server_answers_input_schemas_from_its_tool_table_without_listing() -> None:
    mcp = bookshop()
    assert mcp.server.get_tool_input_schema is not None
    assert mcp.server.get_tool_input_schema("check_stock") == mcp.tool_input_schema("check_stock")
    assert mcp.server.get_tool_input_schema("nope") is None


def test_an_optional_argument_is_marked_with_a_written_out_schema() -> None:
    mcp = MCPServer("Bookshop")

    @mcp.tool()
    def check_stock(
        title: str,
        region: Annotated[str | None, WithJsonSchema({"type": "string", "x-mcp-header": "Region"})] = None,
    ) -> str:
        return f"{title}: {region}"

    assert mcp.tool_input_schema("check_stock") == {
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "region": {"default": None, "title": "Region", "type": "string", "x-mcp-header": "Region"},
        },
        "required": ["title"],
        "title": "check_stockArguments",
        "type": "object",
    }


def test_the_header_marker_writes_the_primitive_type_of_an_optional_argument() -> None:
    mcp = MCPServer("Bookshop")

    @mcp.tool()
    def check_stock(
        title: str,
        region: Annotated[str | None, Header("Region")] = None,
        limit: Annotated[int, Header("Limit")] = 10,
    ) -> str:
        return f"{title}: {region} {limit}"

    properties = (mcp.tool_input_schema("check_stock") or {})["properties"]
    assert properties["region"] == {
        "default": None,
        "title": "Region",
        "type": "string",
        "x-mcp-header": "Region",
    }
    assert properties["limit"] == {
        "default": 10,
        "title": "Limit",
        "type": "integer",
        "x-mcp-header": "Limit",
    }


class Color(Enum):
    RED = "red"


def test_the_header_marker_publishes_an_enum_inline() -> None:
    mcp = MCPServer("Bookshop")

    @mcp.tool()
    def paint(
        colour: Annotated[Color, Header("Colour")], shade: Annotated[Color | None, Header("Shade")] = None
    ) -> str:
        return f"{colour.value} {shade}"

    schema = mcp.tool_input_schema("paint") or {}
    assert "$defs" not in schema
    assert schema["properties"]["colour"] == {
        "enum": ["red"],
        "title": "Color",
        "type": "string",
        "x-mcp-header": "Colour",
    }
    assert schema["properties"]["shade"]["type"] == "string"


class Address(BaseModel):
    region: Annotated[str, marked("Region")]


def tool_with_float(x: Annotated[float, marked("X")]) -> str:
    return ""


def tool_with_list(x: Annotated[list[str], marked("X")]) -> str:
    return ""


def tool_with_optional(region: Annotated[str | None, marked("Region")] = None) -> str:
    return ""


def tool_with_enum(region: Annotated[Color, marked("Region")]) -> str:
    return ""


def tool_with_nested(address: Address) -> str:
    return ""


def tool_with_space(region: Annotated[str, marked("My Region")]) -> str:
    return ""


def tool_with_number_name(region: Annotated[str, marked(5)]) -> str:
    return ""


def tool_with_duplicate(a: Annotated[str, marked("Region")], b: Annotated[str, marked("region")]) -> str:
    return ""


def secret() -> str:
    return "s"


def tool_marking_a_resolved_parameter(v: Annotated[str, Resolve(secret), Header("V")]) -> str:
    return v


def tool_marking_a_resolved_parameter_with_field(v: Annotated[str, Resolve(secret), marked("V")]) -> str:
    return v


def tool_marking_the_context(ctx: Annotated[Context, Header("V")]) -> str:
    return ""


INVALID = {
    tool_with_float: snapshot(
        "Tool 'tool_with_float' has an invalid x-mcp-header annotation: property 'x': x-mcp-header is only permitted on integer/string/boolean properties (got 'number')"
    ),
    tool_with_list: snapshot(
        "Tool 'tool_with_list' has an invalid x-mcp-header annotation: property 'x': x-mcp-header is only permitted on integer/string/boolean properties (got 'array')"
    ),
    tool_with_optional: snapshot(
        "Tool 'tool_with_optional' has an invalid x-mcp-header annotation: property 'region': x-mcp-header is only permitted on integer/string/boolean properties (the type keyword is NoneType, not a string)"
    ),
    tool_with_enum: snapshot(
        "Tool 'tool_with_enum' has an invalid x-mcp-header annotation: property 'region': x-mcp-header is only permitted on integer/string/boolean properties (the type keyword is NoneType, not a string)"
    ),
    tool_with_nested: snapshot(
        "Tool 'tool_with_nested' has an invalid x-mcp-header annotation: x-mcp-header found at a schema position not reachable via a pure `properties` chain"
    ),
    tool_with_space: snapshot(
        "Tool 'tool_with_space' has an invalid x-mcp-header annotation: property 'region': x-mcp-header 'My Region' is not an RFC 9110 token"
    ),
    tool_with_number_name: snapshot(
        "Tool 'tool_with_number_name' has an invalid x-mcp-header annotation: property 'region': x-mcp-header must be a string, not int"
    ),
    tool_with_duplicate: snapshot(
        "Tool 'tool_with_duplicate' has an invalid x-mcp-header annotation: x-mcp-header 'Region' on property 'a' duplicates property 'b'"
    ),
    tool_marking_a_resolved_parameter: snapshot(
        "Tool 'tool_marking_a_resolved_parameter' marks parameter 'v' with Header('V'), but the parameter is filled on the server and never sent by the client; move the marking to a tool argument"
    ),
    tool_marking_a_resolved_parameter_with_field: snapshot(
        "Tool 'tool_marking_a_resolved_parameter_with_field' marks parameter 'v' with Field(json_schema_extra={'x-mcp-header': ...}), but the parameter is filled on the server and never sent by the client; move the marking to a tool argument"
    ),
    tool_marking_the_context: snapshot(
        "Tool 'tool_marking_the_context' marks parameter 'ctx' with Header('V'), but the parameter is filled on the server and never sent by the client; move the marking to a tool argument"
    ),
}


@pytest.mark.parametrize("fn", list(INVALID), ids=lambda fn: fn.__name__)
def test_an_unmarkable_argument_is_refused_at_registration(fn: Any) -> None:
    mcp = MCPServer("Bookshop")
    with pytest.raises(InvalidSignature) as caught:
        mcp.tool()(fn)
    assert str(caught.value) == INVALID[fn]


async def test_the_low_level_server_serves_a_hand_written_marking(protocol_version: str) -> None:
    seed = run_seed(IMPORTS, TOOL, SCHEMA_BY_NAME)
    async with seed["server"].running() as runner:
        client = InMemoryClient(runner, protocol_version=protocol_version)
        call = await client.call_tool("check_stock", {"title": "Dune", "region": "EU"})
        assert await runner.tool_input_schema("check_stock") == seed["CHECK_STOCK"].input_schema
    assert call.text == "Dune: 3 copies in EU."


async def test_the_low_level_server_checks_nothing_at_registration_and_serves_the_marking_as_written() -> (
    None
):
    schema = {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}
    broken = Tool(name="t", input_schema=schema)

    async def only(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[broken])

    server = Server("Bookshop", on_list_tools=only)  # a number cannot travel as a header: not checked here
    async with server.running() as runner:
        listing = await InMemoryClient(runner, protocol_version="2025-11-25").request("tools/list", {})
    assert listing.result["tools"][0]["inputSchema"] == schema


async def post_check_stock(region_header: str | None, region: str) -> tuple[int, dict[str, Any]]:
    app = bookshop().streamable_http_app(json_response=True)
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "check_stock",
    }
    if region_header is not None:
        headers["mcp-param-region"] = region_header
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "check_stock", "arguments": {"title": "Dune", "region": region}, "_meta": meta},
    }
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            response = await client.post("/mcp", json=body, headers=headers)
    return response.status_code, response.json()


@pytest.mark.parametrize(
    ("header", "status", "outcome"),
    [
        ("EU", 200, {"text": "Dune: 3 copies in EU."}),
        (
            "US",
            400,
            snapshot(
                {
                    "code": -32020,
                    "message": "Mcp-Param-Region header does not match the request body's 'region' argument",
                }
            ),
        ),
        (
            None,
            400,
            snapshot(
                {
                    "code": -32020,
                    "message": "Mcp-Param-Region header is missing but the request body's 'region' argument is present",
                }
            ),
        ),
    ],
)
async def test_over_http_at_2026_the_header_must_repeat_the_argument(
    header: str | None, status: int, outcome: dict[str, Any]
) -> None:
    code, answer = await post_check_stock(header, "EU")
    assert code == status
    if status == 200:
        assert answer["result"]["content"][0]["text"] == outcome["text"]
    else:
        assert answer["error"] == outcome
