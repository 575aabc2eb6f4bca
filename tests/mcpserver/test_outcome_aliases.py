"""A consumer annotated with the author's own alias of `ElicitationResult` gets the whole outcome."""

from __future__ import annotations

from typing import Annotated, TypeVar

import pytest
from pydantic import BaseModel
from typing_extensions import TypeAliasType

from mcpdi import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from mcpdi.types import TextContent

pytestmark = pytest.mark.anyio

ERAS = ("2025-11-25", "2026-07-28")
ModelT = TypeVar("ModelT", bound=BaseModel)


class Confirm(BaseModel):
    sure: bool


Outcome = ElicitationResult[Confirm]  # a plain assignment
ConfirmOutcome = TypeAliasType("ConfirmOutcome", ElicitationResult[Confirm])
Answered = TypeAliasType("Answered", ElicitationResult[ModelT], type_params=(ModelT,))


def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def outcome_server() -> MCPServer:
    mcp = MCPServer("Aliases")

    @mcp.tool()
    def plain(ok: Annotated[Outcome, Resolve(confirm)]) -> str:
        return describe(ok)

    @mcp.tool()
    def named(ok: Annotated[ConfirmOutcome, Resolve(confirm)]) -> str:
        return describe(ok)

    @mcp.tool()
    def generic(ok: Annotated[Answered[Confirm], Resolve(confirm)]) -> str:
        return describe(ok)

    return mcp


def describe(outcome: ElicitationResult[Confirm]) -> str:
    if isinstance(outcome, AcceptedElicitation):
        return f"accept sure={outcome.data.sure} ({type(outcome.data).__name__})"
    return outcome.action


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["plain", "named", "generic"])
async def test_an_aliased_outcome_is_the_whole_outcome_under_future_annotations(era: str, tool: str) -> None:
    mcp = outcome_server()
    declined = await mcp.call_tool(tool, answers={confirm: {"action": "decline"}}, protocol_version=era)
    assert declined.content == [TextContent(type="text", text="decline")]
    yes = {confirm: {"action": "accept", "content": {"sure": True}}}
    accepted = await mcp.call_tool(tool, answers=yes, protocol_version=era)
    assert accepted.content == [TextContent(type="text", text="accept sure=True (Confirm)")]
