"""Prompts, resources, templates and completion in a ported server, compared with the SDK."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from port_harness import MODES, outcome, transcripts

pytestmark = pytest.mark.anyio

URIS = [
    "library://catalogue",
    "library://logo",
    "library://stats",
    "library://books/fiction/emma",
    "library://books/poetry/emma",
    "library://books/fiction/banned",
    "library://unknown",
]


async def listings(client: Client) -> dict[str, Any]:
    return {
        "prompts": await outcome(client.list_prompts()),
        "resources": await outcome(client.list_resources()),
        "templates": await outcome(client.list_resource_templates()),
    }


async def prompts(client: Client) -> list[Any]:
    return [
        await outcome(client.get_prompt("review", {"title": "Dune"})),
        await outcome(client.get_prompt("chat", {"title": "Dune"})),
        await outcome(client.get_prompt("cover", {"title": "Dune"})),
    ]


async def reads(client: Client) -> list[Any]:
    return [await outcome(client.read_resource(uri)) for uri in URIS]


async def completions(client: Client) -> list[Any]:
    template = mcp_types.ResourceTemplateReference(type="ref/resource", uri="library://books/{genre}/{title}")
    prompt = mcp_types.PromptReference(type="ref/prompt", name="review")
    return [
        await outcome(client.complete(template, {"name": "genre", "value": "f"})),
        await outcome(client.complete(prompt, {"name": "tone", "value": ""})),
        await outcome(client.complete(prompt, {"name": "title", "value": "D"})),
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", [listings, prompts, reads, completions], ids=lambda s: s.__name__)
async def test_prompts_resources_and_completion_answer_as_in_the_sdk(mode: str, scenario: Any) -> None:
    seen = await transcripts("prompts_resources", mode, scenario)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"], "the scenario saw nothing"
