"""The quick sieve of plain `tools/call` results writes exactly what the full sieve writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_types import methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from mcpdi.lowlevel import sieve_plain_tool_result

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bookshop", "version": "1", "title": "Books"}}
TEXT = [{"type": "text", "text": "Dune"}]

PLAIN: list[dict[str, Any]] = [
    {"content": TEXT, "structuredContent": {"result": "Dune"}, "isError": False, "resultType": "complete"},
    {"content": TEXT, "isError": True, "resultType": "complete", "_meta": SERVER_INFO},
    {"content": [], "resultType": "input_required", "_meta": SERVER_INFO},
    {"content": [*TEXT, *TEXT], "structuredContent": {"a": [1, 2.5, None, {"b": True}]}, "resultType": "x"},
    {"content": TEXT, "resultType": "complete", "_meta": {"n": "1"}},
    {"content": TEXT, "resultType": "complete", "_meta": {**SERVER_INFO, "note": "kept or dropped alike"}},
]

NOT_PLAIN: list[dict[str, Any]] = [
    {"content": TEXT, "structuredContent": {"a": float("inf")}, "resultType": "complete"},
    {"content": TEXT, "structuredContent": {"a": (1, 2)}, "resultType": "complete"},
    {"content": [{"type": "text", "text": 1}], "resultType": "complete"},
    {"content": [{"type": "text", "text": "a", "annotations": {"priority": 1}}], "resultType": "complete"},
    {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "resultType": "complete"},
    {"content": TEXT, "isError": "true", "resultType": "complete"},
    {"content": TEXT, "resultType": "complete", "_meta": {"n": 1}},
    {"content": TEXT, "resultType": "complete", "_meta": {"n": True}},
    {"content": TEXT, "resultType": "complete", "extra": 1},
]


def full_sieve(version: str, result: dict[str, Any]) -> str | None:
    try:
        return json.dumps(methods.serialize_server_result("tools/call", version, result))
    except ValueError:
        return None


@pytest.mark.parametrize("version", KNOWN_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("result", PLAIN)
def test_a_plain_result_is_sieved_to_the_same_json_with_the_same_key_order(
    version: str, result: dict[str, Any]
) -> None:
    sieved = sieve_plain_tool_result(version, result)
    assert sieved is not None
    assert json.dumps(sieved) == full_sieve(version, result)


@pytest.mark.parametrize("version", KNOWN_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("result", NOT_PLAIN)
def test_anything_else_is_left_to_the_full_sieve(version: str, result: dict[str, Any]) -> None:
    assert sieve_plain_tool_result(version, result) is None


def test_a_cached_meta_is_used_only_for_an_equal_meta() -> None:
    first = {"content": TEXT, "resultType": "complete", "_meta": {"n": "1"}}
    assert sieve_plain_tool_result("2026-07-28", first) is not None
    second = {"content": TEXT, "resultType": "complete", "_meta": {"n": "2"}}
    assert json.dumps(sieve_plain_tool_result("2026-07-28", second)) == full_sieve("2026-07-28", second)
    assert json.dumps(sieve_plain_tool_result("2026-07-28", first)) == full_sieve("2026-07-28", first)


def test_the_sieved_result_shares_no_object_with_the_input() -> None:
    result = {
        "content": TEXT,
        "structuredContent": {"result": "Dune"},
        "resultType": "complete",
        "_meta": SERVER_INFO,
    }
    sieved = sieve_plain_tool_result("2026-07-28", result)
    assert sieved is not None
    assert sieved["structuredContent"] is not result["structuredContent"]
    assert sieved["content"][0] is not TEXT[0]
    assert sieved["_meta"] is not result["_meta"]
