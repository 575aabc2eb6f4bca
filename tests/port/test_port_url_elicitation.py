"""URL-mode elicitation in a ported server: the -32042 error and `ctx.elicit_url`, as the SDK does them."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError as SdkMCPError
from port_harness import MODES, load, outcome, transcripts

pytestmark = pytest.mark.anyio


async def payments(client: Client) -> list[Any]:
    seen: list[Any] = [await outcome(client.call_tool("pay", {"amount": 5}))]
    for name, arguments in (("pay", {"amount": 500}), ("connect_both", {})):
        try:
            await client.call_tool(name, arguments)
        except SdkMCPError as error:
            seen.append((error.error.code, error.error.message, error.error.data))
    return seen


@pytest.mark.parametrize("mode", MODES)
async def test_url_elicitation_required_reaches_the_client_as_the_sdk_sends_it(mode: str) -> None:
    seen = await transcripts("url_elicitation", mode, payments)
    assert seen["mcpdi"] == seen["sdk"]
    code, message, data = seen["mcpdi"][1]
    assert (code, message) == (-32042, "URL elicitation required")
    assert data["elicitations"][0]["elicitationId"] == "pay-42"
    assert seen["mcpdi"][2][1] == "Two sign-ins needed"


async def test_elicit_url_asks_the_person_and_reports_completion_in_the_handshake_era() -> None:
    asked: list[Any] = []
    notes: list[Any] = []

    async def on_elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True, exclude={"meta"}))  # not trace ids
        return mcp_types.ElicitResult(action="accept")

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ElicitCompleteNotification):
            notes.append(message.params.elicitation_id)

    async def sign_in(client: Client) -> Any:
        return await outcome(client.call_tool("sign_in", {}))

    seen = await transcripts(
        "url_elicitation", "legacy", sign_in, elicitation_callback=on_elicit, message_handler=on_message
    )
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"]["content"][0]["text"] == "sign-in: accept"
    assert asked[0] == asked[1]
    assert asked[0]["url"] == "https://auth.example/login"
    assert notes == ["login-1", "login-1"]


async def test_url_elicitation_required_error_needs_at_least_one_url() -> None:
    errors = load("url_elicitation", "mcpdi")
    with pytest.raises(ValueError, match="at least one ElicitRequestURLParams"):
        errors.UrlElicitationRequiredError([])
