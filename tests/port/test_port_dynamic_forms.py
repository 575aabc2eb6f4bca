"""A form model built at run time with `create_model`: asked, validated and kept across rounds."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from port_harness import MODES, outcome, transcripts

pytestmark = pytest.mark.anyio


def answering(content: dict[str, Any], asked: list[Any]) -> Any:
    async def on_elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True, exclude={"meta"}))
        if params.message == "May we publish your answers?":
            return mcp_types.ElicitResult(action="accept", content={"publish": True})
        return mcp_types.ElicitResult(action="accept", content=content)

    return on_elicit


async def survey(client: Client) -> Any:
    result = await outcome(client.call_tool("survey", {"questions": "colour,pet"}))
    return (result.get("isError", False), result["content"][0]["text"]) if "content" in result else result


@pytest.mark.parametrize("mode", MODES)
async def test_a_form_built_at_run_time_is_asked_and_its_answer_injected(mode: str) -> None:
    asked: list[Any] = []
    content = {"colour": "blue", "pet": "cat"}
    seen = await transcripts("dynamic_forms", mode, survey, elicitation_callback=answering(content, asked))
    assert seen["mcpdi"] == seen["sdk"] == (False, "colour=blue, pet=cat (publish=True)")
    form = next(item for item in asked if item["message"] == "Please answer the survey")
    assert form["requestedSchema"]["required"] == ["colour", "pet"]
    assert asked[: len(asked) // 2] == asked[len(asked) // 2 :]  # both servers asked the same


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_that_misses_a_run_time_field_is_refused_as_in_the_sdk(mode: str) -> None:
    asked: list[Any] = []
    seen = await transcripts(
        "dynamic_forms", mode, survey, elicitation_callback=answering({"colour": "blue"}, asked)
    )
    assert seen["mcpdi"][0] is seen["sdk"][0] is True
    # The SDK names the resolver by its module and qualified name; mcpdi by its name only.
    assert seen["mcpdi"][1] == (
        "Error executing tool survey: Resolver 'ask_answers' received an accepted elicitation "
        "whose content does not match the requested schema"
    )
    assert seen["sdk"][1].startswith(
        "Error executing tool survey: Resolver 'port_dynamic_forms_sdk:ask_answers'"
    )
    assert seen["sdk"][1].endswith("ccepted elicitation whose content does not match the requested schema")
