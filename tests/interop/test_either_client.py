"""What both clients see alike: mcpdi's client against either server, the official client against mcpdi's.

Each test runs for every pairing (`CLIENT>SERVER-TRANSPORT`) in every mode; what only one client
does is in `test_mcpdi_client.py` and `test_sdk_client.py`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from interop_clients import answer_llm, answer_name, answer_roots, any_client, decline, text_of
from interop_servers import target_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["legacy", "2026-07-28", "auto"]
PAIRINGS = [
    "mcpdi>sdk-http",
    "mcpdi>sdk-stdio",
    "mcpdi>mcpdi-http",
    "mcpdi>mcpdi-stdio",
    "mcpdi>mcpdi-memory",
    "sdk>mcpdi-http",
    "sdk>mcpdi-stdio",
]


@pytest.fixture(params=PAIRINGS)
def pairing(request: pytest.FixtureRequest) -> tuple[str, Any]:
    """The client kind and the target it connects to."""
    client, served = request.param.split(">")
    return client, target_of(request, served)


@asynccontextmanager
async def connected(pairing: tuple[str, Any], mode: str, **options: Any) -> AsyncGenerator[Any]:
    client, target = pairing
    async with any_client(client, target, mode, **options) as connection:
        yield connection


@pytest.mark.parametrize("mode", MODES)
async def test_an_elicitation_is_answered_by_the_callback(pairing: tuple[str, Any], mode: str) -> None:
    async with connected(pairing, mode, elicitation_callback=answer_name) as client:
        result = await client.call_tool("greet", {"greeting": "Hello"})
        assert text_of(result) == "Hello, Ada!"


@pytest.mark.parametrize("mode", MODES)
async def test_two_dependent_questions_are_answered_in_turn(pairing: tuple[str, Any], mode: str) -> None:
    async with connected(pairing, mode, elicitation_callback=answer_name) as client:
        result = await client.call_tool("favourite", {})
        assert text_of(result) == "Ada likes teal"


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_roots_are_answered_by_their_callbacks(
    pairing: tuple[str, Any], mode: str
) -> None:
    options = {"sampling_callback": answer_llm, "list_roots_callback": answer_roots}
    async with connected(pairing, mode, **options) as client:
        result = await client.call_tool("sample_and_roots", {})
        assert text_of(result) == "llm said 'hi!'; roots=['file:///home/user/project']"


@pytest.mark.parametrize("mode", MODES)
async def test_a_declined_elicitation_ends_the_call_as_a_tool_error(
    pairing: tuple[str, Any], mode: str
) -> None:
    async with connected(pairing, mode, elicitation_callback=decline) as client:
        result = await client.call_tool("greet", {"greeting": "Hello"})
        assert result.is_error
        assert text_of(result) == (
            "Error executing tool greet: "
            "Resolver for parameter 'who' could not resolve: elicitation was decline"
        )


@pytest.mark.parametrize("mode", MODES)
async def test_header_mirrored_arguments_reach_the_tool_after_listing(
    pairing: tuple[str, Any], mode: str
) -> None:
    async with connected(pairing, mode) as client:
        await client.list_tools()
        result = await client.call_tool("query", {"region": "Zürich", "q": "x", "limit": 5})
        assert text_of(result) == "Zürich:x:5"
