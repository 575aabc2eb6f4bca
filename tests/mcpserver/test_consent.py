"""A refused question stops the call, and side effects wait for consent, in both eras."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from mcpdi import Elicit, ElicitationResult, MCPServer, Resolve, ToolError
from mcpdi_transport import Client
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio

ERAS = ("2025-11-25", "2026-07-28")
REFUSED_TEXT = {
    "decline": "Error executing tool pay: Resolver for parameter 'ok' could not resolve: elicitation was decline",
    "cancel": "Error executing tool pay: Resolver for parameter 'ok' could not resolve: elicitation was cancel",
    "invalid": "Error executing tool pay: Resolver 'confirm_payment' received an accepted elicitation whose content does not match the requested schema",
}
REFUSALS = (
    {"action": "decline"},
    {"action": "cancel"},
    {"action": "accept", "content": {"sure": "not a boolean"}},  # fails validation
)


class Confirm(BaseModel):
    sure: bool


def payment_server() -> tuple[MCPServer, list[str], list[str]]:
    mcp = MCPServer("Shop")
    charges: list[str] = []
    questions: list[str] = []

    async def confirm_payment() -> Elicit[Confirm]:
        questions.append("Pay 100 EUR?")
        return Elicit("Pay 100 EUR?", Confirm)

    async def confirm_receipt() -> Elicit[Confirm]:
        questions.append("Email a receipt?")
        return Elicit("Email a receipt?", Confirm)

    async def charge_card() -> str:
        charges.append("charged")
        return "tx-1"

    @mcp.tool()
    async def pay(
        ok: Annotated[Confirm, Resolve(confirm_payment)],
        receipt: Annotated[Confirm, Resolve(confirm_receipt)],
        tx: Annotated[str, Resolve(charge_card)],
    ) -> str:
        return f"paid {tx}, receipt={receipt.sure}"

    @mcp.tool()
    async def pay_then_ask(
        ok: Annotated[Confirm, Resolve(confirm_payment)],
        tx: Annotated[str, Resolve(charge_card, scope="call")],
        receipt: Annotated[Confirm, Resolve(confirm_receipt)],
    ) -> str:
        return f"paid {tx}, receipt={receipt.sure}"

    @mcp.tool()
    async def pay_or_not(
        ok: Annotated[ElicitationResult[Confirm], Resolve(confirm_payment)],
        tx: Annotated[str, Resolve(charge_card)],
    ) -> str:
        return f"{ok.action} {tx}"

    return mcp, charges, questions


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("refusal", REFUSALS, ids=["decline", "cancel", "invalid"])
async def test_a_refused_payment_charges_nothing_and_asks_nothing_more(
    era: str, refusal: dict[str, Any]
) -> None:
    mcp, charges, questions = payment_server()

    def answer(method: str, params: Any) -> Any:
        return (
            refusal
            if params["message"] == "Pay 100 EUR?"
            else {"action": "accept", "content": {"sure": True}}
        )

    with pytest.raises(ToolError) as refused:
        await mcp.call_tool("pay", {}, answers=answer, protocol_version=era)
    assert charges == []
    assert str(refused.value) == REFUSED_TEXT[refusal["action"] if "content" not in refusal else "invalid"]
    if era == "2025-11-25":
        assert questions == ["Pay 100 EUR?"], "the person who said no is not shown the next question"
    else:  # both questions went out together in the first round; the second round ends the call
        assert questions == ["Pay 100 EUR?", "Email a receipt?", "Pay 100 EUR?"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_accepted_payment_charges_exactly_once(era: str) -> None:
    mcp, charges, _ = payment_server()
    result = await mcp.call_tool(
        "pay",
        {},
        answers={"elicitation/create": {"action": "accept", "content": {"sure": True}}},
        protocol_version=era,
    )
    assert text_of(result) == "paid tx-1, receipt=True"
    assert charges == ["charged"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_consumer_of_the_whole_outcome_handles_the_refusal_itself(era: str) -> None:
    mcp, charges, _ = payment_server()
    result = await mcp.call_tool(
        "pay_or_not", {}, answers={"elicitation/create": {"action": "decline"}}, protocol_version=era
    )
    assert text_of(result) == "decline tx-1"
    assert charges == ["charged"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("action", "expected"), [("decline", []), ("accept", ["charged"])])
async def test_through_a_client_a_declined_payment_charges_nothing_and_an_accepted_one_once(
    mode: str, action: str, expected: list[str]
) -> None:
    mcp, charges, _ = payment_server()
    seen: list[str] = []

    async def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        content = {"sure": True} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async with Client(mcp, mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("pay", {})
    assert charges == expected
    assert result.is_error is (action == "decline")
    if mode == "legacy":
        assert seen == (["Pay 100 EUR?"] if action == "decline" else ["Pay 100 EUR?", "Email a receipt?"])
    else:
        assert seen == ["Pay 100 EUR?", "Email a receipt?"], "asked together, once"


@pytest.mark.parametrize("era", ERAS)
async def test_a_question_answered_in_an_earlier_round_is_not_put_again_by_another_resolver(era: str) -> None:
    mcp = MCPServer("Shipping")

    def abroad() -> Elicit[Confirm]:
        return Elicit("Ship abroad?", Confirm)

    def customs(first: Annotated[Confirm, Resolve(abroad)]) -> Elicit[Confirm]:
        return Elicit("Ship abroad?", Confirm)  # the same question, asked once the first is answered

    @mcp.tool()
    def ship(a: Annotated[Confirm, Resolve(abroad)], b: Annotated[Confirm, Resolve(customs)]) -> str:
        return f"{a.sure} {b.sure}"

    asked: list[str] = []

    def answer(method: str, params: Any) -> Any:
        asked.append(params["message"])
        return {"action": "accept", "content": {"sure": True}}

    result = await mcp.call_tool("ship", {}, answers=answer, protocol_version=era)
    assert text_of(result) == "True True"
    assert asked == ["Ship abroad?"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_charge_between_two_questions_happens_after_the_first_and_before_the_second(era: str) -> None:
    mcp, charges, _ = payment_server()
    events: list[str] = []

    def answer(method: str, params: Any) -> Any:
        events.append(f"{params['message']} ({len(charges)} charged)")
        if params["message"] == "Email a receipt?":
            return {"action": "decline"}
        return {"action": "accept", "content": {"sure": True}}

    with pytest.raises(ToolError, match="parameter 'receipt' could not resolve: elicitation was decline"):
        await mcp.call_tool("pay_then_ask", {}, answers=answer, protocol_version=era)
    assert events == ["Pay 100 EUR? (0 charged)", "Email a receipt? (1 charged)"]
    assert charges == ["charged"], "a call-scoped charge runs once, whichever round asks next"


@pytest.mark.parametrize("era", ERAS)
async def test_a_check_before_the_question_refuses_the_call_before_anyone_is_asked(era: str) -> None:
    mcp = MCPServer("Shop")
    asked: list[str] = []

    async def check_stock(title: str) -> int:
        if title == "Emma":
            raise ToolError(f"{title} is out of stock")
        return 3

    async def confirm_order(title: str) -> Elicit[Confirm]:
        return Elicit(f"Order {title}?", Confirm)

    @mcp.tool()
    async def order(
        title: str,
        stock: Annotated[int, Resolve(check_stock)],
        ok: Annotated[Confirm, Resolve(confirm_order)],
    ) -> str:
        return f"ordered {title} ({stock} left)"

    def answer(method: str, params: Any) -> Any:
        asked.append(params["message"])
        return {"action": "accept", "content": {"sure": True}}

    with pytest.raises(ToolError, match=r"^Error executing tool order: Emma is out of stock$"):
        await mcp.call_tool("order", {"title": "Emma"}, answers=answer, protocol_version=era)
    assert asked == []
    result = await mcp.call_tool("order", {"title": "Dune"}, answers=answer, protocol_version=era)
    assert (text_of(result), asked) == ("ordered Dune (3 left)", ["Order Dune?"])
