"""A response carrying a result the quick sieve built is written by `to_json` exactly as `json` writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from mcpdi.lowlevel import encode_message, sieve_plain_tool_result
from mcpdi.lowlevel._fast_sieve import sieve_stamped_tool_result
from mcpdi.lowlevel._jsonrpc import NATIVE_INT_LIMIT, NativeJSON

SERVER_INFO = {"name": "bookshop", "version": "1", "title": "Books"}
AWKWARD_TEXT = '\x00\x1f"\\\n\t\x7f\u2028 é 😀 </script>'


class Kind(str):
    pass


def json_text(message: Any) -> bytes:
    """What `encode_message` writes for `message` by way of `json` alone."""
    plain = json.loads(json.dumps(message))  # plain dicts all the way down
    return json.dumps(plain, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


NATIVE: list[dict[str, Any]] = [
    {"content": text("Dune"), "structuredContent": {"result": "Dune"}, "isError": False},
    {"content": text(AWKWARD_TEXT), "structuredContent": {AWKWARD_TEXT: AWKWARD_TEXT}, "isError": True},
    {"content": [], "structuredContent": {"n": NATIVE_INT_LIMIT - 1, "m": -NATIVE_INT_LIMIT + 1, "b": True}},
    {"content": text("a") + text("b"), "structuredContent": {"none": None}, "_meta": {"n": "1"}},
    {"content": text("Dune"), "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}},
]
NOT_NATIVE: list[dict[str, Any]] = [
    {"content": text("Dune"), "structuredContent": {"result": 1e-07}},
    {"content": text("Dune"), "structuredContent": {"result": NATIVE_INT_LIMIT}},
    {"content": text("Dune"), "structuredContent": {"result": -NATIVE_INT_LIMIT}},
    {"content": text("Dune"), "structuredContent": {"a": [1, {"b": "c"}]}},
    {"content": [{"type": Kind("text"), "text": "Dune"}]},
]


@pytest.mark.parametrize("version", KNOWN_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("result", NATIVE)
@pytest.mark.parametrize("id_", [7, "call-7", NATIVE_INT_LIMIT - 1, NATIVE_INT_LIMIT, -NATIVE_INT_LIMIT])
def test_a_native_result_is_written_as_json_writes_it(
    version: str, result: dict[str, Any], id_: int | str
) -> None:
    sieved = sieve_plain_tool_result(version, {**result, "resultType": "complete"})
    assert type(sieved) is NativeJSON
    response = {"jsonrpc": "2.0", "id": id_, "result": sieved}
    assert encode_message(response) == json_text(response)


@pytest.mark.parametrize("result", NOT_NATIVE)
def test_a_result_holding_floats_big_ints_or_subclasses_is_left_to_json(result: dict[str, Any]) -> None:
    sieved = sieve_plain_tool_result("2025-11-25", result)
    assert sieved is not None
    assert type(sieved) is dict
    response = {"jsonrpc": "2.0", "id": 1, "result": sieved}
    assert encode_message(response) == json_text(response)


@pytest.mark.parametrize("version", ["2026-07-28"])
def test_a_stamped_result_is_native_and_written_as_json_writes_it(version: str) -> None:
    result = {"content": text(AWKWARD_TEXT), "structuredContent": {"result": 3}, "isError": False}
    for _ in range(2):  # the second time from the kept stamp
        sieved = sieve_stamped_tool_result(version, result, SERVER_INFO)
        assert type(sieved) is NativeJSON
        response = {"jsonrpc": "2.0", "id": 1, "result": sieved}
        assert encode_message(response) == json_text(response)


def test_a_lone_surrogate_in_a_native_result_is_answered_as_from_any_other() -> None:
    sieved = sieve_plain_tool_result("2025-11-25", {"content": text("\ud800")})
    assert type(sieved) is NativeJSON
    plain = {"jsonrpc": "2.0", "id": 3, "result": dict(sieved)}
    assert encode_message({"jsonrpc": "2.0", "id": 3, "result": sieved}) == encode_message(plain)
    assert json.loads(encode_message(plain))["error"]["code"] == -32603


def test_a_message_that_is_no_plain_success_response_is_left_to_json() -> None:
    native = NativeJSON(content=[])
    for message in (
        {"jsonrpc": "2.0", "id": 1, "result": native, "extra": 1.5e-07},
        {"jsonrpc": "2.0", "id": 10**30, "result": native},
        {"jsonrpc": "2.0", "id": True, "result": native},
    ):
        assert encode_message(message) == json_text(message)


def test_every_character_is_escaped_by_to_json_as_json_escapes_it() -> None:
    every = "".join(chr(point) for point in range(0x110000) if not 0xD800 <= point < 0xE000)
    sieved = sieve_plain_tool_result(
        "2025-11-25", {"content": text(every), "structuredContent": {every: every}}
    )
    assert type(sieved) is NativeJSON
    response = {"jsonrpc": "2.0", "id": 1, "result": sieved}
    assert encode_message(response) == json_text(response)
