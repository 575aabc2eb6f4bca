"""Client code written for the SDK's `Client`, run with mcpdi's: the same calls, the same answers.

Each scenario is written once against the SDK's client API and run twice against one
server (the SDK's own, over Streamable HTTP): with `mcp.Client` and with
`mcpdi_transport.Client`, the only change a port makes.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import mcp
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server as SdkServer
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import MODES, load, serve, text, wire

import mcpdi
import mcpdi_transport

pytestmark = pytest.mark.anyio

CLIENTS: dict[str, Any] = {"sdk": mcp.Client, "mcpdi": mcpdi_transport.Client}
Scenario = Callable[[Any, str, str], Awaitable[Any]]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def url() -> AsyncGenerator[str]:
    async with serve(load("client_surface", "sdk").mcp.streamable_http_app()) as served:
        yield served


async def both(scenario: Scenario, url: str, mode: str) -> dict[str, Any]:
    return {flavour: await scenario(client, url, mode) for flavour, client in CLIENTS.items()}


def error_of(error: Exception) -> Any:
    assert isinstance(error, SdkMCPError | mcpdi.MCPError)
    return (error.error.code, error.error.message)


async def timed_out(Client: Any, url: str, mode: str) -> Any:
    seen: Any = "no error"
    async with Client(url, mode=mode, read_timeout_seconds=2.0) as client:
        try:
            await client.call_tool("slow", {"seconds": 8})
        except Exception as error:
            seen = error_of(error)
        fast = text(await client.call_tool("slow", {"seconds": 0}))
    return seen, fast


@pytest.mark.parametrize("mode", MODES)
async def test_read_timeout_seconds_abandons_a_slow_request_as_the_sdk_does(url: str, mode: str) -> None:
    seen = await both(timed_out, url, mode)
    assert seen["mcpdi"] == seen["sdk"] == ((-32001, "Request 'tools/call' timed out"), "done")


async def completes_and_pings(Client: Any, url: str, mode: str) -> Any:
    async with Client(url, mode=mode, extensions=None, raise_exceptions=False) as client:
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="hello"), {"name": "name", "value": "A"}
        )
        ping = await client.send_ping() if mode == "legacy" else None
        via_session = await client.session.send_ping() if mode == "legacy" else None
    return wire(completion), wire(ping), wire(via_session)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the SDK's ping
@pytest.mark.parametrize("mode", MODES)
async def test_complete_and_send_ping_answer_as_the_sdks(url: str, mode: str) -> None:
    seen = await both(completes_and_pings, url, mode)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"][0]["completion"]["values"] == ["Ada", "Alan"]


async def rounds_by_hand(Client: Any, url: str, mode: str) -> Any:
    async def never(context: Any, params: Any) -> Any:
        raise AssertionError("the rounds are answered by hand")

    async with Client(url, mode=mode, elicitation_callback=never) as client:
        first = await client.session.call_tool("greet", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        (key, request), *_ = first.input_requests.items()
        answer = types.ElicitResult(action="accept", content={"name": "Ada"})
        final = await client.session.call_tool(
            "greet", {}, input_responses={key: answer}, request_state=first.request_state
        )
    params: Any = request.params
    return type(request).__name__, params.message, text(final)


async def test_manual_input_required_rounds_go_through_client_session(url: str) -> None:
    seen = await both(rounds_by_hand, url, "2026-07-28")
    assert seen["mcpdi"] == seen["sdk"] == ("ElicitRequest", "Who are you?", "Hello Ada")


async def sampling_with_tools(Client: Any, url: str, mode: str) -> Any:
    asked: list[Any] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        asked.append([tool.name for tool in params.tools or ()])
        call = types.ToolUseContent(type="tool_use", id="c1", name="weather", input={"city": "Oslo"})
        return types.CreateMessageResultWithTools(
            role="assistant", content=[call], model="m", stop_reason="toolUse"
        )

    capabilities = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with Client(
        url,
        mode=mode,
        sampling_callback=sample,
        sampling_capabilities=capabilities,
        input_required_max_rounds=3,
    ) as client:
        result = text(await client.call_tool("forecast", {}))
    return result, asked


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_declaring_sampling_tools_answers_a_sample_with_tools(url: str, mode: str) -> None:
    seen = await both(sampling_with_tools, url, mode)
    assert seen["mcpdi"] == seen["sdk"] == ("toolUse: tool_use", [["weather"]])


async def test_mcpdis_server_asks_mcpdis_client_a_sample_with_tools() -> None:
    for mode in MODES:
        async with serve(load("client_surface", "mcpdi").mcp.streamable_http_app()) as served:
            seen = await sampling_with_tools(mcpdi_transport.Client, served, mode)
        assert seen == ("toolUse: tool_use", [["weather"]]), mode


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"max_rounds": 2, "input_required_max_rounds": 3},
            r"Client takes max_rounds= or input_required_max_rounds= \(the official SDK's name\), not both",
        ),
        ({"cache": object()}, r"Client\(cache=\.\.\.\) is not taken by mcpdi's client \(no response cache\)"),
        ({"prior_discover": object()}, r"Client\(prior_discover=\.\.\.\) is not taken by mcpdi's client"),
    ],
)
def test_client_options_mcpdi_does_not_take_are_refused_by_name(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=f"^{message}"):
        mcpdi_transport.Client("http://127.0.0.1:1/mcp", **options)


def test_every_keyword_of_the_sdks_client_is_a_keyword_of_mcpdis() -> None:
    sdk = {field.name for field in dataclasses.fields(mcp.Client) if field.init} - {"server"}
    ours = set(inspect.signature(mcpdi_transport.Client).parameters)
    assert sdk - ours == set()


async def test_cache_none_and_prior_discover_none_are_taken() -> None:
    app = load("client_surface", "mcpdi").mcp.streamable_http_app()
    async with (
        serve(app) as served,
        mcpdi_transport.Client(served, cache=None, prior_discover=None) as client,
    ):
        assert text(await client.call_tool("slow", {"seconds": 0})) == "done"


def crashing_servers() -> dict[str, Any]:
    """The same low-level server, a `tools/list` handler that crashes, in the SDK and in mcpdi."""

    async def list_tools(ctx: Any, params: Any) -> Any:
        raise ValueError("the tool table is gone")

    return {
        "sdk": SdkServer("crashing", on_list_tools=list_tools),
        "mcpdi": mcpdi.lowlevel.Server("crashing", on_list_tools=list_tools),
    }


@pytest.mark.parametrize("raise_exceptions", [True, False])
async def test_raise_exceptions_hands_an_in_memory_crash_to_the_caller_as_the_sdk_does(
    raise_exceptions: bool,
) -> None:
    seen: dict[str, Any] = {}
    for flavour, server in crashing_servers().items():
        async with CLIENTS[flavour](server, raise_exceptions=raise_exceptions) as client:
            with pytest.raises((SdkMCPError, mcpdi.MCPError)) as raised:
                await client.list_tools()
        cause = raised.value.__cause__
        seen[flavour] = (error_of(raised.value), type(cause).__name__, str(cause) if cause else None)
    expected = (
        ((-32603, "the tool table is gone"), "ValueError", "the tool table is gone")
        if raise_exceptions
        else ((-32603, "Internal server error"), "NoneType", None)
    )
    assert seen == {"sdk": expected, "mcpdi": expected}


@pytest.mark.parametrize("mode", MODES)
async def test_raise_exceptions_leaves_the_next_request_and_other_errors_as_they_were(mode: str) -> None:
    calls: list[str] = []

    async def list_tools(ctx: Any, params: Any) -> Any:
        calls.append("list")
        if len(calls) == 1:
            raise KeyError("first")
        return types.ListToolsResult(tools=[])

    async def read_resource(ctx: Any, params: Any) -> Any:
        raise mcpdi.MCPError(-32002, "no such resource")

    server = mcpdi.lowlevel.Server("flaky", on_list_tools=list_tools, on_read_resource=read_resource)
    async with mcpdi_transport.Client(server, mode=mode, raise_exceptions=True) as client:
        with pytest.raises(mcpdi.MCPError) as crashed:
            await client.list_tools()
        assert isinstance(crashed.value.__cause__, KeyError)
        assert (await client.list_tools()).tools == []
        with pytest.raises(mcpdi.MCPError) as refused:
            await client.read_resource("res://missing")
    assert error_of(refused.value) == (-32002, "no such resource")
    assert refused.value.__cause__ is None
