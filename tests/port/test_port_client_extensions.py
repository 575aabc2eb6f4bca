"""`Client(extensions=[...])` as SDK client code writes it, run with the SDK's client and mcpdi's.

One scenario, written once against the SDK's client-extension API (`ClientExtension`,
`NotificationBinding`, `ResultClaim`, `advertise`), runs with `mcp.Client` and the names of
`mcp.client`, and with `mcpdi_transport.Client` and the same names from `mcpdi_transport` (the
port's only change), against the reference SDK's server and its mcpdi port, both over HTTP.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import AsyncGenerator
from typing import Any, Literal

import anyio
import mcp
import mcp.client
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import FLAVOURS, MODES, load, serve, text, wire
from pydantic import BaseModel

import mcpdi
import mcpdi_transport

pytestmark = pytest.mark.anyio

CLIENTS: dict[str, tuple[Any, pytypes.ModuleType]] = {
    "sdk": (mcp.Client, mcp.client),
    "mcpdi": (mcpdi_transport.Client, mcpdi_transport),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def urls() -> AsyncGenerator[dict[str, str]]:
    async with (
        serve(load("client_extensions", "sdk").mcp.streamable_http_app()) as sdk,
        serve(load("client_extensions", "mcpdi").mcp.streamable_http_app()) as ported,
    ):
        yield {"sdk": sdk, "mcpdi": ported}


class Tick(BaseModel):
    n: int


class Ticket(types.Result):
    result_type: Literal["com.example/ticket"] = "com.example/ticket"
    ticket: str


class Secret(types.Result):
    secret: str
    seen: dict[str, Any] | None = None


SECRET = types.Request[dict[str, Any], str](method="com.example/secret", params={})


async def outcome(call: Any) -> Any:
    try:
        return wire(await call)
    except (SdkMCPError, mcpdi.MCPError) as error:
        return {"error": error.error.code, "message": error.error.message}
    except RuntimeError as error:  # UnexpectedClaimedResult, under either client's name for it
        return {"raised": type(error).__name__, "message": str(error)}


def extensions(names: pytypes.ModuleType, ticks: list[int], ticked: anyio.Event) -> list[Any]:
    """The client's two extensions, built from `names` (the SDK's `mcp.client` or `mcpdi_transport`)."""

    async def on_tick(params: Tick) -> None:
        ticks.append(params.n)
        ticked.set()

    async def redeem(result: Ticket, ctx: Any) -> types.CallToolResult:
        return await ctx.session.call_tool("redeem", {"ticket": result.ticket})

    class Guarded(names.ClientExtension):
        identifier = "com.example/guarded"

        def settings(self) -> dict[str, Any]:
            return {"level": 2}

        def notifications(self) -> list[Any]:
            return [names.NotificationBinding(method="com.example/tick", params_type=Tick, handler=on_tick)]

    class Tickets(names.ClientExtension):
        identifier = "com.example/tickets"

        def claims(self) -> list[Any]:
            return [names.ResultClaim(result_type="com.example/ticket", model=Ticket, resolve=redeem)]

    return [Guarded(), Tickets()]


async def extended(client_flavour: str, url: str, mode: str) -> dict[str, Any]:
    Client, names = CLIENTS[client_flavour]
    ticks: list[int] = []
    ticked = anyio.Event()
    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        async with Client(url, mode=mode, extensions=extensions(names, ticks, ticked)) as client:
            seen["secret"] = await outcome(client.session.send_request(SECRET, Secret))
            await ticked.wait()
            seen["ticks"] = ticks
            seen["deferred"] = await outcome(client.call_tool("deferred", {}))
            seen["claimed, by hand"] = await outcome(
                client.session.call_tool("deferred", {}, allow_claimed=True)
            )
            seen["claimed, not allowed"] = await outcome(client.session.call_tool("deferred", {}))
            seen["plain"] = text(await client.call_tool("redeem", {"ticket": "t-2"}))
    return seen


@pytest.mark.parametrize("server", FLAVOURS)
@pytest.mark.parametrize("mode", MODES)
async def test_client_extensions_are_advertised_observed_and_resolved_as_by_the_sdks_client(
    urls: dict[str, str], server: str, mode: str
) -> None:
    seen = {flavour: await extended(flavour, urls[server], mode) for flavour in CLIENTS}
    assert seen["mcpdi"] == seen["sdk"]
    ours = seen["mcpdi"]
    assert ours["ticks"] == [1]
    advertised = ours["secret"]["seen"]
    if mode == "legacy":  # a claim-bearing extension is not advertised where no claim can arrive
        assert advertised == {"com.example/guarded": {"level": 2}}
        assert ours["deferred"] == {"error": -32603, "message": "Handler returned an invalid result"}
    else:
        assert advertised == {"com.example/guarded": {"level": 2}, "com.example/tickets": {}}
        assert ours["deferred"]["content"][0]["text"] == "redeemed t-1"
        assert ours["claimed, by hand"]["ticket"] == "t-1"
        assert ours["claimed, not allowed"]["raised"] == "UnexpectedClaimedResult"


async def declared(client_flavour: str, url: str, mode: str, extension: Any) -> Any:
    Client, _ = CLIENTS[client_flavour]
    async with Client(url, mode=mode, extensions=extension) as client:
        return await outcome(client.session.send_request(SECRET, Secret))


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_requiring_an_extension_refuses_a_client_without_it_and_takes_an_advertised_one(
    urls: dict[str, str], mode: str
) -> None:
    for server in FLAVOURS:
        without = {flavour: await declared(flavour, urls[server], mode, None) for flavour in CLIENTS}
        assert (
            without["mcpdi"]
            == without["sdk"]
            == {
                "error": -32021,
                "message": "Client did not declare required extension 'com.example/guarded'",
            }
        )
        advertised = {
            flavour: await declared(flavour, urls[server], mode, [names.advertise("com.example/guarded")])
            for flavour, (_, names) in CLIENTS.items()
        }
        assert advertised["mcpdi"] == advertised["sdk"]
        assert advertised["mcpdi"]["seen"] == {"com.example/guarded": {}}


async def ignore(params: Any) -> None:
    return None


async def resolve(result: Any, ctx: Any) -> Any:
    return result


def misuse(names: pytypes.ModuleType) -> dict[str, Any]:
    """What SDK client code gets wrong, built with `names`: each is refused with the SDK's words."""

    class Unnamed(names.ClientExtension):
        pass

    class Binds(names.ClientExtension):
        identifier = "com.example/binds"

        def notifications(self) -> list[Any]:
            return [names.NotificationBinding(method="com.example/tick", params_type=Tick, handler=ignore)]

    class Claims(names.ClientExtension):
        identifier = "com.example/claims"

        def claims(self) -> list[Any]:
            return [names.ResultClaim(result_type="com.example/ticket", model=Ticket, resolve=resolve)]

    again = {"identifier": "com.example/again"}
    return {
        "an extension without an identifier": lambda: [Unnamed()],
        "the same identifier twice": lambda: [names.advertise("com.example/a")] * 2,
        "the mapping form": lambda: {"com.example/a": {}},
        "two observers of one method": lambda: [Binds(), type("Again", (Binds,), again)()],
        "two resolvers of one resultType": lambda: [Claims(), type("Again", (Claims,), again)()],
        "an identifier without a prefix": lambda: [names.advertise("weather")],
        "a claim on another method": lambda: [
            names.ResultClaim(result_type="x", model=Ticket, resolve=resolve, method="prompts/get")
        ],
        "a claim of a core resultType": lambda: [
            names.ResultClaim(result_type="complete", model=Ticket, resolve=resolve)
        ],
        "a claim whose model has another tag": lambda: [
            names.ResultClaim(result_type="com.example/other", model=Ticket, resolve=resolve)
        ],
        "a claim limited to a handshake version": lambda: [
            names.ResultClaim(
                result_type="com.example/ticket",
                model=Ticket,
                resolve=resolve,
                protocol_versions=frozenset({"2025-11-25"}),
            )
        ],
    }


@pytest.mark.parametrize("case", misuse(mcp.client))
def test_client_extension_misuse_is_refused_with_the_sdks_words(case: str) -> None:
    with pytest.raises((TypeError, ValueError)) as sdk:
        mcp.Client("http://127.0.0.1:1/mcp", extensions=misuse(mcp.client)[case]())
    with pytest.raises(type(sdk.value)) as ours:
        mcpdi_transport.Client("http://127.0.0.1:1/mcp", extensions=misuse(mcpdi_transport)[case]())
    assert str(ours.value) == str(sdk.value)
