"""Each requestState is accepted once: a confirmed round cannot be sent again to repeat it."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import logging
from typing import Annotated, Any

import anyio
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from mcpdi import (
    AccessToken,
    Elicit,
    MCPServer,
    MemoryReplayStore,
    ReplayStore,
    RequestStateSecurity,
    Resolve,
    authenticated,
    from_address,
)
from mcpdi._state._security import CallBinding, InvalidRequestState
from mcpdi.testing import InMemoryClient

from .conftest import connect

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
KEY = b"k" * 32
NOW = 1_800_000_000.0
YES = {"action": "accept", "content": {"ok": True}}
INVALID_STATE = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}


class Confirm(BaseModel):
    ok: bool


def ask_confirm(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Charge {amount}?", Confirm)


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def shop(security: RequestStateSecurity) -> tuple[MCPServer, list[int]]:
    """A server whose `charge` tool has a side effect, recorded in the returned list."""
    charged: list[int] = []
    mcp = MCPServer("Shop", request_state=security)

    @mcp.tool()
    def charge(amount: int, confirm: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        charged.append(amount)
        return f"charged {amount}"

    return mcp, charged


async def confirmed_round(client: InMemoryClient) -> dict[str, Any]:
    """The params of the final `charge` round: the answer and the state that goes with it."""
    first = (await client.send("tools/call", {"name": "charge", "arguments": {"amount": 5}}))["result"]
    (key,) = first["inputRequests"]
    return {
        "name": "charge",
        "arguments": {"amount": 5},
        "inputResponses": {key: YES},
        "requestState": first["requestState"],
    }


async def test_a_state_sent_again_is_refused_and_the_side_effect_runs_once() -> None:
    mcp, charged = shop(RequestStateSecurity([KEY]))
    async with connect(mcp, MODERN) as client:
        final = await confirmed_round(client)
        done = await client.send("tools/call", final)
        replayed = await client.send("tools/call", final)

    assert done["result"]["content"][0]["text"] == "charged 5"
    assert replayed["error"] == INVALID_STATE
    assert charged == [5]


async def test_of_ten_parallel_replays_of_one_state_exactly_one_runs() -> None:
    mcp, charged = shop(RequestStateSecurity([KEY]))
    responses: list[dict[str, Any]] = []
    async with connect(mcp, MODERN) as client:
        final = await confirmed_round(client)

        async def send() -> None:
            responses.append(await client.send("tools/call", final))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(send)

    assert sum("result" in response for response in responses) == 1
    assert [response["error"] for response in responses if "error" in response] == [INVALID_STATE] * 9
    assert charged == [5]


async def test_every_round_hands_out_a_new_state_so_multi_round_calls_still_work() -> None:
    mcp = MCPServer("Shop", request_state=RequestStateSecurity([KEY]))

    def ask_twice(first: Annotated[Confirm, Resolve(ask_confirm)]) -> Elicit[Confirm]:
        return Elicit(f"Really, after {first.ok}?", Confirm)

    @mcp.tool()
    def careful(amount: int, sure: Annotated[Confirm, Resolve(ask_twice)]) -> str:
        return f"{amount}: {sure.ok}"

    async with connect(mcp, MODERN) as client:
        first = (await client.send("tools/call", {"name": "careful", "arguments": {"amount": 1}}))["result"]
        states = [first["requestState"]]
        result = first
        while result.get("resultType") == "input_required":
            (key,) = result["inputRequests"]
            retry = {
                "name": "careful",
                "arguments": {"amount": 1},
                "inputResponses": {key: YES},
                "requestState": result["requestState"],
            }
            result = (await client.send("tools/call", retry))["result"]
            if "requestState" in result:
                states.append(result["requestState"])

    assert result["content"][0]["text"] == "1: True"
    assert len(states) == len(set(states)) == 2


async def test_with_single_use_off_a_state_can_be_replayed_until_it_expires() -> None:
    clock = Clock()
    mcp, charged = shop(RequestStateSecurity([KEY], single_use=False, clock=clock, ttl=60))
    async with connect(mcp, MODERN) as client:
        final = await confirmed_round(client)
        for _ in range(3):
            assert "result" in await client.send("tools/call", final)
        clock.now += 60
        expired = await client.send("tools/call", final)

    assert charged == [5, 5, 5]
    assert expired["error"] == INVALID_STATE


async def test_two_workers_sharing_keys_and_a_store_accept_a_state_once() -> None:
    store = MemoryReplayStore()
    first_worker, charged_first = shop(RequestStateSecurity([KEY], replay_store=store))
    second_worker, charged_second = shop(RequestStateSecurity([KEY], replay_store=store))
    async with connect(first_worker, MODERN) as one, connect(second_worker, MODERN) as two:
        final = await confirmed_round(one)
        done = await two.send("tools/call", final)
        replayed = await one.send("tools/call", final)

    assert "result" in done
    assert replayed["error"] == INVALID_STATE
    assert (charged_first, charged_second) == ([], [5])


class BrokenStore:
    async def claim(self, state_id: str, expires_at: float) -> bool:
        msg = "store is broken"
        raise RuntimeError(msg)


class UnreachableStore:
    def __init__(self) -> None:
        self.up = False

    async def claim(self, state_id: str, expires_at: float) -> bool:
        if not self.up:
            msg = "store is down"
            raise ConnectionError(msg)
        return True


async def test_a_store_that_raises_refuses_the_state_and_logs_why(caplog: pytest.LogCaptureFixture) -> None:
    mcp, charged = shop(RequestStateSecurity([KEY], replay_store=BrokenStore()))
    async with connect(mcp, MODERN) as client:
        final = await confirmed_round(client)
        with caplog.at_level(logging.INFO, logger="mcpdi"):
            response = await client.send("tools/call", final)

    assert response["error"] == INVALID_STATE
    assert charged == []
    assert "requestState replay store raised; refusing the token" in caplog.text
    assert "store is broken" in caplog.text
    assert "replay store raised RuntimeError" in caplog.text


async def test_an_unreachable_store_fails_the_round_without_spending_the_token() -> None:
    store = UnreachableStore()
    mcp, charged = shop(RequestStateSecurity([KEY], replay_store=store))
    async with connect(mcp, MODERN) as client:
        final = await confirmed_round(client)
        refused = await client.send("tools/call", final)
        store.up = True
        served = await client.send("tools/call", final)

    assert refused["error"] == {
        "code": -32603,
        "message": "The requestState replay store is unreachable; send the same request again shortly",
        "data": {"reason": "replay_store_unavailable"},
    }
    assert "result" in served
    assert charged == [5]


def test_a_custom_store_satisfies_the_protocol() -> None:
    store: ReplayStore = BrokenStore()
    assert RequestStateSecurity([KEY], replay_store=store).replay_store is store


CALL = CallBinding.of("tools/call", "charge", {"amount": 5}, audience="Shop")


async def test_redeem_claims_the_state_id_until_the_token_expires() -> None:
    clock = Clock()
    store = MemoryReplayStore(clock=clock)
    policy = RequestStateSecurity([KEY], clock=clock, ttl=30, replay_store=store)
    token = policy.seal(CALL, {"a": 1})

    assert policy.open(token, CALL) == {"a": 1}  # checking does not use the token up
    assert await policy.redeem(token, CALL) == {"a": 1}
    with pytest.raises(InvalidRequestState) as again:
        await policy.redeem(token, CALL)
    assert again.value.reason == snapshot("token was already used (each requestState is accepted once)")
    assert len(store) == 1
    clock.now += 30
    with pytest.raises(InvalidRequestState, match="expired"):
        await policy.redeem(token, CALL)
    assert await store.claim("another", NOW + 100)
    assert len(store) == 1  # the expired id was dropped


async def test_a_peer_holding_half_of_a_nearly_full_store_waits_for_its_ids_to_expire() -> None:
    clock = Clock()
    store = MemoryReplayStore(max_entries=8, clock=clock)
    with from_address("10.0.0.1"):
        flood = [await store.claim(f"f{n}", NOW + 10) for n in range(8)]
        with authenticated(AccessToken(token="t", client_id="app", scopes=[], subject="ada")):
            ada = [await store.claim(f"a{n}", NOW + 10) for n in range(3)]
    with from_address("10.0.0.2"):
        other = [await store.claim("o1", NOW + 20)]
    clock.now = NOW + 10  # the flood's ids expire, and with them its share
    with from_address("10.0.0.1"):
        later = [await store.claim(f"g{n}", NOW + 30) for n in range(4)]
    assert flood == [True] * 6 + [False] * 2
    assert ada == [True, True, False]  # the store is full: no peer gets more
    assert other == [False]
    assert later == [True] * 4


async def test_a_full_store_refuses_new_states_rather_than_forget_live_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    store = MemoryReplayStore(max_entries=2, clock=clock)

    with caplog.at_level(logging.WARNING, logger="mcpdi"):
        claims = [
            await store.claim("a", NOW + 10),
            await store.claim("b", NOW + 20),
            await store.claim("c", NOW + 20),
            await store.claim("a", NOW + 10),
        ]
        clock.now = NOW + 10
        after_expiry = [await store.claim("c", NOW + 30), await store.claim("a", NOW + 30)]

    assert claims == [True, True, False, False]
    assert after_expiry == [True, False]
    assert len(store) == 2
    assert caplog.messages[0] == snapshot(
        "requestState replay store is full (2 live ids); refusing a round. Raise MemoryReplayStore(max_entries=...) or plug in a shared store"
    )


def test_bad_replay_options_are_explained() -> None:
    messages: list[str] = []
    for make in (
        lambda: RequestStateSecurity([KEY], single_use=False, replay_store=MemoryReplayStore()),
        lambda: MemoryReplayStore(max_entries=0),
        lambda: MemoryReplayStore(max_entries=True),
    ):
        with pytest.raises(ValueError, match=r"replay_store|max_entries") as caught:
            make()
        messages.append(str(caught.value))

    assert messages == snapshot(
        [
            "RequestStateSecurity got a replay_store with single_use=False; drop one of them",
            "MemoryReplayStore max_entries must be a positive int, not 0",
            "MemoryReplayStore max_entries must be a positive int, not True",
        ]
    )


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/get", {"name": "invoice", "arguments": {"amount": "5"}}),
        ("resources/read", {"uri": "invoices://5"}),
    ],
)
async def test_prompt_and_resource_rounds_are_single_use_too(method: str, params: dict[str, Any]) -> None:
    mcp = MCPServer("Shop", request_state=RequestStateSecurity([KEY]))
    made: list[str] = []

    def ask_amount_confirm(amount: str) -> Elicit[Confirm]:
        return Elicit(f"Invoice {amount}?", Confirm)

    @mcp.prompt()
    def invoice(amount: str, confirm: Annotated[Confirm, Resolve(ask_amount_confirm)]) -> str:
        made.append(amount)
        return f"invoice {amount}"

    @mcp.resource("invoices://{amount}")
    def invoice_file(amount: str, confirm: Annotated[Confirm, Resolve(ask_amount_confirm)]) -> str:
        made.append(amount)
        return f"invoice {amount}"

    async with connect(mcp, MODERN) as client:
        first = (await client.send(method, params))["result"]
        (key,) = first["inputRequests"]
        final = params | {"inputResponses": {key: YES}, "requestState": first["requestState"]}
        done = await client.send(method, final)
        replayed = await client.send(method, final)

    assert "result" in done
    assert replayed["error"] == INVALID_STATE
    assert made == ["5"]


def test_a_request_served_over_http_counts_to_its_client_address_unless_one_is_set() -> None:
    from mcpdi._state._replay import current_peer
    from mcpdi.lowlevel import serving_http_request

    assert current_peer() == "local"
    with serving_http_request({"type": "http", "client": ("10.0.0.7", 51000)}):
        assert current_peer() == "address 10.0.0.7"
        with from_address("10.0.0.8"):
            assert current_peer() == "address 10.0.0.8"  # a transport's own address wins
        with authenticated(AccessToken(token="t", client_id="app", scopes=[], subject="ada")):
            assert current_peer() == 'principal ["app","ada"]'  # the token's holder wins over both
    with serving_http_request({"type": "http", "client": None}):
        assert current_peer() == "local"  # an ASGI server may not know the client
