"""`Context` in a ported server: lifespan, logs, progress, nested resource reads and tool errors."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from port_harness import MODES, outcome, transcripts

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count", {"title": "dune"}),
    ("shelf", {"title": "emma"}),
    ("shelf", {"title": "secret"}),
    ("shelf", {"title": "missing"}),
    ("welcome", {}),
    ("order", {"title": "dune", "copies": 1}),
    ("order", {"title": "dune", "copies": 5}),
    ("order", {"title": "dune", "copies": "many"}),
    ("crash", {}),
]


def scenario(logs: list[Any], progress: list[Any]) -> Any:
    async def run(client: Client) -> list[Any]:
        seen: list[Any] = []
        for name, arguments in CALLS:
            result = await outcome(client.call_tool(name, arguments, progress_callback=record(progress)))
            if isinstance(result, dict) and "content" in result:
                # pydantic's validation text names its own version in a URL; the SDK's is the same package
                seen.append((name, result.get("isError", False), result["content"][0]["text"].split("\n")[0]))
            else:
                seen.append((name, result))
        return seen

    return run


def record(into: list[Any]) -> Any:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        into.append((progress, total, message))

    return on_progress


# The SDK deprecates logging (ctx.info) with a warning; the call itself is what is compared.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", MODES)
async def test_context_calls_behave_as_in_the_sdk(mode: str) -> None:
    logs: list[Any] = []
    progress: list[Any] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    seen = await transcripts("context_use", mode, scenario(logs, progress), logging_callback=on_log)
    assert seen["mcpdi"] == seen["sdk"]
    assert seen["mcpdi"][0] == ("count", False, "3")
    assert seen["mcpdi"][2] == ("shelf", True, "Error executing tool shelf: the secret shelf is closed")
    assert seen["mcpdi"][-1] == ("crash", True, "Error executing tool crash")
    if mode == "legacy":  # both servers sent the same log and progress notifications, in order
        assert logs[: len(logs) // 2] == logs[len(logs) // 2 :] == [("info", "counting dune")]
        assert progress[:1] == progress[1:] == [(1.0, 2.0, "looked up")]


async def test_the_constructor_takes_the_sdk_positional_order() -> None:
    from port_harness import load

    for flavour in ("sdk", "mcpdi"):
        mcp = load("context_use", flavour).mcp  # type: ignore[arg-type]
        assert (mcp.name, mcp.title, mcp.description) == (
            "Context use",
            "Context Use",
            "Tools that use the request context.",
        )
