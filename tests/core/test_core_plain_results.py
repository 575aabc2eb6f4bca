"""The quick sieve of plain `tools/call` results writes exactly what the full sieve writes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mcp_types import methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from mcpdi.lowlevel import sieve_plain_tool_result
from mcpdi.lowlevel._envelope import stamp_modern_result
from mcpdi.lowlevel._fast_sieve import sieve_stamped_tool_result

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


STAMP_INFOS: list[dict[str, Any]] = [
    {"name": "bookshop", "version": "1"},
    {"name": "bookshop", "version": "1", "title": "Books", "websiteUrl": "https://books.example"},
    {"name": "bookshop", "version": "1", "icons": [{"src": "https://books.example/i.png"}]},
]
UNSTAMPED: list[dict[str, Any]] = [
    {"content": TEXT, "structuredContent": {"result": "Dune"}, "isError": False},
    {"content": TEXT, "isError": True, "resultType": "complete"},
    {"content": TEXT, "_meta": None},
    {"content": TEXT, "_meta": {"trace": "t1"}},
    {"content": [], "resultType": "input_required"},
    {"content": TEXT, "resultType": "x"},
    {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]},
    {"content": TEXT, "structuredContent": {"a": float("inf")}},
]


def stamped_then_sieved(version: str, result: dict[str, Any], server_info: dict[str, Any]) -> str | None:
    stamped = stamp_modern_result(copy.deepcopy(result), server_info=server_info, cacheable=False)
    plain = sieve_plain_tool_result(version, stamped)
    return json.dumps(plain) if plain is not None else full_sieve(version, stamped)


@pytest.mark.parametrize("server_info", STAMP_INFOS)
@pytest.mark.parametrize("result", UNSTAMPED)
def test_a_result_sieved_with_the_kept_stamp_is_the_stamped_result_sieved(
    result: dict[str, Any], server_info: dict[str, Any]
) -> None:
    before = copy.deepcopy(result)
    for _ in range(2):  # the second time from the kept stamp
        sieved = sieve_stamped_tool_result("2026-07-28", result, server_info)
        if sieved is not None:
            assert json.dumps(sieved) == stamped_then_sieved("2026-07-28", result, server_info)
    assert result == before  # left for the full path as it came


def test_the_kept_stamp_serves_plain_results_of_a_plain_server_and_follows_a_changed_one() -> None:
    info = {"name": "bookshop", "version": "1"}
    result = {"content": TEXT}
    first = sieve_stamped_tool_result("2026-07-28", result, info)
    assert first is not None
    assert first["_meta"] == {"io.modelcontextprotocol/serverInfo": info}
    info["version"] = "2"  # the same object, changed: the stamp follows
    second = sieve_stamped_tool_result("2026-07-28", result, info)
    assert second is not None
    assert json.dumps(second) == stamped_then_sieved("2026-07-28", result, info)
    assert second["_meta"] is not first["_meta"]
    assert (
        second["_meta"]["io.modelcontextprotocol/serverInfo"]
        is not first["_meta"]["io.modelcontextprotocol/serverInfo"]
    )
    other = {"name": "other", "version": "1"}
    assert json.dumps(sieve_stamped_tool_result("2026-07-28", result, other)) == stamped_then_sieved(
        "2026-07-28", result, other
    )


def test_each_answer_from_the_kept_stamp_owns_its_server_info() -> None:
    info = {"name": "bookshop", "version": "1", "title": "Books"}
    first = sieve_stamped_tool_result("2026-07-28", {"content": TEXT}, info)
    second = sieve_stamped_tool_result("2026-07-28", {"content": TEXT}, info)
    assert first is not None
    assert second is not None
    first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] = "changed by whoever got the first"
    assert second["_meta"] == {"io.modelcontextprotocol/serverInfo": info}
    third = sieve_stamped_tool_result("2026-07-28", {"content": TEXT}, info)
    assert third is not None
    assert json.dumps(third) == stamped_then_sieved("2026-07-28", {"content": TEXT}, info)


def test_a_version_whose_sieve_orders_fields_otherwise_gets_them_in_its_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpdi.lowlevel import _fast_sieve

    shape = _fast_sieve._shape("2026-07-28")  # pyright: ignore[reportPrivateUsage]
    assert shape is not None
    reordered = _fast_sieve._Shape(  # pyright: ignore[reportPrivateUsage]
        tuple(reversed(shape.result_keys)), shape.block_keys, shape.keeps_result_type, in_write_order=False
    )
    monkeypatch.setitem(_fast_sieve._shapes, "2026-07-28", reordered)  # pyright: ignore[reportPrivateUsage]
    result = {"content": TEXT, "structuredContent": {"result": "Dune"}, "isError": False, "_meta": {"n": "1"}}
    sieved = sieve_plain_tool_result("2026-07-28", {**result, "resultType": "complete"})
    assert sieved is not None
    assert tuple(sieved) == reordered.result_keys
