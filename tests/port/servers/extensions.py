"""A server with an opt-in extension (SEP-2133), in the reference SDK's spelling."""

from typing import Any

from mcp.server.mcpserver import Extension, MCPServer, MethodBinding, ResourceBinding, ToolBinding
from mcp_types import CallToolResult, RequestParams, TextContent


class EchoParams(RequestParams):
    text: str


async def echo(ctx: Any, params: EchoParams) -> dict[str, str]:
    return {"echoed": params.text}


class Stations:
    """A ready-made resource object (the SDK's `TextResource` is one)."""

    uri = "weather://stations"
    name = "stations"
    title = None
    description = "Where forecasts come from"
    mime_type = "text/plain"
    icons = None
    annotations = None
    meta = None

    async def read(self) -> str:
        return "Oslo, Lima"


def forecast(city: str) -> str:
    return f"sunny in {city}"


class Weather(Extension):
    identifier = "com.example/weather"

    def settings(self) -> dict[str, Any]:
        return {"units": "metric"}

    def tools(self) -> list[ToolBinding]:
        return [ToolBinding(forecast, meta={"com.example/weather": True}, kwargs={"title": "Forecast"})]

    def resources(self) -> list[ResourceBinding]:
        return [ResourceBinding(Stations())]  # pyright: ignore[reportArgumentType] (a duck-typed Resource)

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("com.example/echo", EchoParams, echo)]


class Maintenance(Extension):
    identifier = "com.example/maintenance"

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        if params.name == "closed":
            return CallToolResult(
                content=[TextContent(type="text", text="down for maintenance")], is_error=True
            )
        return await call_next(ctx)


mcp = MCPServer("Weather", extensions=[Weather(), Maintenance()])


@mcp.tool()
def closed() -> str:
    return "open"


@mcp.tool()
def hello(name: str) -> str:
    return f"Hello {name}"
