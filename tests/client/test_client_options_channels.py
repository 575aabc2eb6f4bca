"""Every `Client(...)` keyword, on stdio, HTTP and in memory: its effect seen, or a clear refusal.

The rows are checked against `Client.__init__`'s signature, so a new keyword without a row fails.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from client_files import INTEROP, SERVERS, load_file
from pydantic import BaseModel

from mcpdi import MCPError
from mcpdi_transport import Client, ClientExtension, NotificationBinding, RoundLimitExceeded, StdioTarget

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER_FILE = SERVERS / "options_server.py"
CHANNELS = ("memory", "stdio", "http")


@asynccontextmanager
async def targets() -> AsyncIterator[dict[str, Any]]:
    """One server per channel: the object in memory, a spawned file on stdio, uvicorn over HTTP."""
    server = load_file(SERVER_FILE).server
    async with load_file(INTEROP).serve_app(server.streamable_http_app()) as url:
        yield {"memory": server, "stdio": StdioTarget(sys.executable, (str(SERVER_FILE),)), "http": url}


async def name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def llm(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="m"
    )


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work")])  # pyright: ignore[reportArgumentType]


Check = Callable[[Client, dict[str, list[Any]]], Any]


async def _elicitation(client: Client, seen: dict[str, list[Any]]) -> None:
    assert (await client.call_tool("greet", {})).structured_content == {"result": "hello Ada"}


async def _sampling(client: Client, seen: dict[str, list[Any]]) -> None:
    assert (await client.call_tool("llm", {})).structured_content == {"result": "hi"}


async def _roots(client: Client, seen: dict[str, list[Any]]) -> None:
    assert (await client.call_tool("roots", {})).structured_content == {"result": ["file:///work"]}


async def _logging(client: Client, seen: dict[str, list[Any]]) -> None:
    seen["logs"].clear()
    await client.call_tool("log", {})
    # log_level="warning": the debug line is filtered by the server, the warning reaches the callback
    assert [(p.level, p.data) for p in seen["logs"]] == [("warning", "a warning line")]


async def _message_handler(client: Client, seen: dict[str, list[Any]]) -> None:
    seen["messages"].clear()
    await client.call_tool("log", {})
    assert [type(m).__name__ for m in seen["messages"]] == ["LoggingMessageNotification"]


async def _max_rounds(client: Client, seen: dict[str, list[Any]]) -> None:
    if client.era == "legacy":  # handshake-era questions are server requests within one call, not rounds
        assert (await client.call_tool("twice", {})).structured_content == {"result": "Ada"}
        return
    with pytest.raises(
        RoundLimitExceeded, match=r"^tools/call .twice. still asked for input after 1 rounds; "
    ):
        await client.call_tool("twice", {})


async def _client_info(client: Client, seen: dict[str, list[Any]]) -> None:
    assert (await client.call_tool("whoami", {})).structured_content == {"result": "probe/7.1"}


async def _read_timeout(client: Client, seen: dict[str, list[Any]]) -> None:
    with pytest.raises(MCPError) as timed_out:
        await client.call_tool("sleepy", {"seconds": 30})
    assert timed_out.value.code == -32001
    assert (await client.call_tool("sleepy", {"seconds": 0})).structured_content == {"result": "awake"}


async def _sampling_capabilities(client: Client, seen: dict[str, list[Any]]) -> None:
    seen_by_server = (await client.call_tool("sampling_seen", {})).structured_content
    assert seen_by_server == {"result": '{"context":{}}'}


async def _extensions(client: Client, seen: dict[str, list[Any]]) -> None:
    seen["ticks"].clear()
    ticked = seen["ticked"][0] = anyio.Event()
    advertised = (await client.call_tool("extensions_seen", {})).structured_content
    assert advertised == {"result": '{"com.example/probe": {"v": 1}}'}
    with anyio.fail_after(5):
        await ticked.wait()
    assert seen["ticks"] == [7]


class Tick(BaseModel):
    n: int


def _probe_extension(seen: dict[str, list[Any]]) -> ClientExtension:
    seen["ticked"] = [anyio.Event()]

    async def on_tick(params: Tick) -> None:
        seen["ticks"].append(params.n)
        seen["ticked"][0].set()

    class Probe(ClientExtension):
        identifier = "com.example/probe"

        def settings(self) -> dict[str, Any]:
            return {"v": 1}

        def notifications(self) -> list[NotificationBinding[Any]]:
            return [NotificationBinding(method="com.example/tick", params_type=Tick, handler=on_tick)]

    return Probe()


def _options(seen: dict[str, list[Any]]) -> dict[str, Any]:
    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(params)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            seen["messages"].append(message)

    return {
        "elicitation_callback": name,
        "sampling_callback": llm,
        "list_roots_callback": roots,
        "logging_callback": on_log,
        "message_handler": on_message,
        "max_rounds": 1,
        "client_info": types.Implementation(name="probe", version="7.1"),
        "log_level": "warning",
        "discover_timeout": 5.0,
        # it bounds initialize too, which over stdio waits for the server process to start
        "read_timeout_seconds": 8.0,
        "sampling_capabilities": types.SamplingCapability(context=types.SamplingContextCapability()),
        "extensions": [_probe_extension(seen)],
    }


HONOURED: dict[str, Check] = {
    "elicitation_callback": _elicitation,
    "sampling_callback": _sampling,
    "list_roots_callback": _roots,
    "logging_callback": _logging,
    "message_handler": _message_handler,
    "max_rounds": _max_rounds,
    "client_info": _client_info,
    "read_timeout_seconds": _read_timeout,
    "sampling_capabilities": _sampling_capabilities,
    "extensions": _extensions,
}
"""Keywords passed together to one client per channel and era, each with what shows its effect."""

SEPARATE = {
    "mode": "each channel is connected with mode='auto' (modern era) and mode='legacy' (handshake era)",
    "log_level": "filters the logs in `_logging` on both eras (per request `_meta`, or logging/setLevel)",
    "discover_timeout": "bounds server/discover; a server that answers in time is modern on every channel",
    "headers": "reach a server in memory and over HTTP; refused on stdio (test below)",
    "input_required_max_rounds": "the official SDK's name for max_rounds (test below)",
    "raise_exceptions": "a crashing handler's exception in memory (tests/port/test_port_client.py)",
}

REFUSED: dict[str, tuple[Any, str]] = {
    "cache": (object(), r"^Client\(cache=\.\.\.\) is not taken by mcpdi's client"),
    "prior_discover": (object(), r"^Client\(prior_discover=\.\.\.\) is not taken by mcpdi's client"),
}
"""Keywords of the official SDK that mcpdi's client refuses on every channel, naming what to do."""


def test_every_client_keyword_has_a_row() -> None:
    keywords = {
        name
        for name, parameter in inspect.signature(Client.__init__).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert keywords == set(HONOURED) | set(SEPARATE) | set(REFUSED)
    assert not set(HONOURED) & set(REFUSED)


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_each_option_shows_its_effect_on_every_channel(mode: str, channel: str) -> None:
    async with targets() as by_channel:
        seen: dict[str, list[Any]] = {"logs": [], "messages": [], "ticks": []}
        async with Client(by_channel[channel], mode=mode, **_options(seen)) as client:  # pyright: ignore[reportArgumentType]
            assert client.era == ("modern" if mode == "auto" else "legacy"), channel
            for option, check in HONOURED.items():
                try:
                    await check(client, seen)
                except (AssertionError, pytest.fail.Exception, Exception) as failed:
                    raise AssertionError(f"{option} on {channel} ({mode}): {failed}") from None


async def test_headers_reach_memory_and_http_and_are_refused_on_stdio() -> None:
    async with targets() as by_channel:
        for channel in ("memory", "http"):
            async with Client(by_channel[channel], headers={"X-Tenant": "acme"}) as client:
                result = await client.call_tool("header", {"name": "x-tenant"})
            assert result.structured_content == {"result": "acme"}, channel
        with pytest.raises(ValueError, match=r"StdioTarget\(command, env=\{\.\.\.\}\)\)$"):
            Client(by_channel["stdio"], headers={"X-Tenant": "acme"})


def test_input_required_max_rounds_is_max_rounds_under_the_sdk_name() -> None:
    with pytest.raises(ValueError, match=r"^Client\(max_rounds=0\) must allow at least one round$"):
        Client("http://127.0.0.1:1/mcp", input_required_max_rounds=0)
    with pytest.raises(TypeError, match=r"^Client takes max_rounds= or input_required_max_rounds="):
        Client("http://127.0.0.1:1/mcp", max_rounds=2, input_required_max_rounds=2)


@pytest.mark.parametrize("option", sorted(REFUSED))
@pytest.mark.parametrize("channel", CHANNELS)
def test_sdk_only_options_are_refused_on_every_channel(option: str, channel: str) -> None:
    value, message = REFUSED[option]
    target = {
        "memory": load_file(SERVER_FILE).server,
        "stdio": StdioTarget(sys.executable, (str(SERVER_FILE),)),
        "http": "http://127.0.0.1:1/mcp",
    }[channel]
    with pytest.raises(TypeError, match=message):
        Client(target, **{option: value})
