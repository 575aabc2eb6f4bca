"""RFC 6570 templates read as the SDK reads them; malformed ones refused at registration alike."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from port_harness import MODES, load, outcome, transcripts

pytestmark = pytest.mark.anyio

URIS = (
    "files://src/main.py",
    "files://docs/a%20b.md",
    "files://",
    "files://../etc/passwd",
    "files://%2e%2e/etc/passwd",
    "files://a/%2e%2e/%2e%2e/b",
    "logs://api",
    "logs://api?level=error",
    "logs://api?level=error&since=5m&utm=x",
    "logs://api?%6cevel=debug",
    "echo://a%20b",
    "echo://caf%C3%A9",
    "echo://",
    "echo://a/b",
    "docs://guide/intro.md",
    "docs://guide/intro",
)


async def reads(client: Client) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for uri in URIS:
        result = await outcome(client.read_resource(uri))
        seen[uri] = result["contents"][0]["text"] if "contents" in result else result
    return seen


@pytest.fixture(params=MODES)
async def seen(request: pytest.FixtureRequest) -> dict[Any, Any]:
    return await transcripts("templates", request.param, reads)


async def test_every_read_gives_the_sdks_answer(seen: dict[str, Any]) -> None:
    assert seen["mcpdi"] == seen["sdk"]


async def test_reserved_expansion_spans_segments_and_path_tricks_stay_refused(seen: dict[str, Any]) -> None:
    ours = seen["mcpdi"]
    assert ours["files://src/main.py"] == "file src/main.py"
    assert ours["files://docs/a%20b.md"] == "file docs/a b.md"
    unknown = {"error": -32602, "message": "Unknown resource: files://../etc/passwd"}
    assert ours["files://../etc/passwd"] == unknown
    assert ours["files://%2e%2e/etc/passwd"]["error"] == -32602
    assert ours["files://a/%2e%2e/%2e%2e/b"]["error"] == -32602


async def test_a_query_tail_is_matched_in_any_order_with_defaults(seen: dict[str, Any]) -> None:
    ours = seen["mcpdi"]
    assert ours["logs://api"] == "api since 1h at info"
    assert ours["logs://api?level=error&since=5m&utm=x"] == "api since 5m at error"
    assert ours["logs://api?%6cevel=debug"] == "api since 1h at info"  # names are not decoded


async def test_values_are_percent_decoded_and_may_be_empty(seen: dict[str, Any]) -> None:
    ours = seen["mcpdi"]
    assert (ours["echo://a%20b"], ours["echo://caf%C3%A9"], ours["echo://"]) == ("[a b]", "[café]", "[]")
    assert ours["echo://a/b"] == {"error": -32602, "message": "Unknown resource: echo://a/b"}


@pytest.mark.parametrize(
    ("template", "sentence", "position"),
    [
        ("r://{a", "Unclosed expression at position 4", 4),
        ("r://{}", "Empty expression at position 4", 4),
        ("r://{+}", "Expression has operator but no variables at position 4", 4),
        ("r://{a:3}", "Prefix modifier {var:N} is not supported (in 'a:3' at position 4)", 4),
        ("r://{a*}", "Explode modifier on {a*} is not supported for matching", 4),
        ("r://{a b}", "Invalid variable name 'a b' at position 4", 4),
        (
            "r://{+a}/{+b}",
            "Template contains more than one multi-segment variable ({+var}, {#var}, or explode modifier); matching would be ambiguous",
            None,
        ),
        (
            "r://{?a}{?b}",
            "Template contains more than one {?...} expression; use {?a,b} or {?a}{&b} for multiple query parameters",
            None,
        ),
        ("r://{a}/{a}", "Variable 'a' appears more than once; repeated variables are not supported", None),
    ],
)
def test_a_malformed_template_raises_invalid_uri_template_with_the_sdks_words(
    template: str, sentence: str, position: int | None
) -> None:
    sdk = load("templates", "sdk").refusal(template)
    ours = load("templates", "mcpdi").refusal(template)
    assert sdk == ("InvalidUriTemplate", sentence, sdk[2])
    assert ours[:2] == sdk[:2]
    if position is not None:
        assert ours[2] == sdk[2] == position


def test_invalid_uri_template_is_a_value_error_and_an_invalid_signature() -> None:
    import mcpdi

    assert issubclass(mcpdi.InvalidUriTemplate, ValueError)
    assert issubclass(mcpdi.InvalidUriTemplate, mcpdi.InvalidSignature)
