"""A 2026-07-28 POST's routing and `Mcp-Param-*` headers against its body (protocol.md §2.6), checked
by `check_modern_http_request` and by the runner on a connection that carries the headers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as types
import pytest
from core_doubles import ECHO, RecordingPeer, make_server, modern_request
from inline_snapshot import snapshot

from mcpdi.lowlevel import Connection, ServerRequestContext, check_modern_http_request


def headers_for(
    body: dict[str, Any], **overrides: str | Sequence[str] | None
) -> dict[str, str | Sequence[str]]:
    headers: dict[str, str | Sequence[str] | None] = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": body["method"],
        "content-type": "application/json",
    }
    name = body["params"].get("name") or body["params"].get("uri")
    if name is not None:
        headers["mcp-name"] = name
    headers.update({key.replace("_", "-"): value for key, value in overrides.items()})
    return {key: value for key, value in headers.items() if value is not None}


def rejection(headers: dict[str, str | Sequence[str]], body: dict[str, Any]) -> dict[str, Any] | None:
    error = check_modern_http_request(headers, body)
    return None if error is None else error.to_error()


CALL = modern_request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})


@pytest.mark.parametrize(
    "body",
    [
        CALL,
        modern_request(2, "tools/list"),
        modern_request(3, "resources/read", {"uri": "file:///x"}),
        modern_request(4, "prompts/get", {"name": "greet"}),
    ],
    ids=["tools/call", "tools/list", "resources/read", "prompts/get"],
)
def test_headers_that_agree_with_the_body_pass(body: dict[str, Any]) -> None:
    assert check_modern_http_request(headers_for(body), body) is None


def test_a_name_sent_with_the_base64_sentinel_is_decoded_before_comparing() -> None:
    assert check_modern_http_request(headers_for(CALL, mcp_name="=?base64?ZWNobw==?="), CALL) is None


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        (
            {"mcp_method": ["tools/call", "tools/call"]},
            snapshot({"code": -32020, "message": "mcp-method header appears more than once"}),
        ),
        (
            {"mcp_method": None},
            snapshot(
                {"code": -32020, "message": "mcp-method header does not match the request body's method"}
            ),
        ),
        (
            {"mcp_method": "TOOLS/CALL"},
            snapshot(
                {"code": -32020, "message": "mcp-method header does not match the request body's method"}
            ),
        ),
        (
            {"mcp_name": "foo"},
            snapshot(
                {
                    "code": -32020,
                    "message": "mcp-name header does not match the request body's 'name' parameter",
                }
            ),
        ),
        (
            {"mcp_name": None},
            snapshot(
                {
                    "code": -32020,
                    "message": "mcp-name header does not match the request body's 'name' parameter",
                }
            ),
        ),
        (
            {"mcp_name": "=?base64?ZWNobw?="},
            snapshot(
                {
                    "code": -32020,
                    "message": "mcp-name header does not match the request body's 'name' parameter",
                }
            ),
        ),
        (
            {"mcp_protocol_version": "2025-11-25"},
            snapshot(
                {
                    "code": -32020,
                    "message": "mcp-protocol-version header does not match the request envelope's "
                    "protocol version",
                }
            ),
        ),
        (
            {"mcp_protocol_version": None},
            snapshot(
                {
                    "code": -32020,
                    "message": "mcp-protocol-version header does not match the request envelope's "
                    "protocol version",
                }
            ),
        ),
    ],
    ids=[
        "duplicate",
        "no-method",
        "method-case",
        "other-name",
        "no-name",
        "malformed-sentinel",
        "version-differs",
        "no-version",
    ],
)
def test_a_header_that_disagrees_with_the_body_is_a_header_mismatch(
    overrides: dict[str, Any], error: dict[str, Any]
) -> None:
    assert rejection(headers_for(CALL, **overrides), CALL) == error


def test_the_envelope_is_checked_before_the_headers() -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers: dict[str, str | Sequence[str]] = {
        "mcp-protocol-version": "2099-01-01",
        "mcp-method": "tools/list",
    }
    assert rejection(headers, body) == snapshot(
        {
            "code": -32602,
            "message": "params._meta must be an object carrying the required "
            "'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' "
            "envelope keys",
        }
    )


def test_an_unsupported_version_is_reported_once_the_headers_agree() -> None:
    body = modern_request(1, "tools/list", version="2099-01-01")
    assert rejection(headers_for(body, mcp_protocol_version="2099-01-01"), body) == snapshot(
        {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {
                "supported": ["2026-07-28"],
                "requested": "2099-01-01",
            },
        }
    )


def test_a_non_string_version_fails_the_header_rung_first() -> None:
    body = modern_request(1, "tools/list", version=2026)
    assert rejection(headers_for(body), body) == snapshot(
        {
            "code": -32020,
            "message": "mcp-protocol-version header does not match the request envelope's protocol version",
        }
    )


def test_a_duplicate_is_found_across_differently_cased_names() -> None:
    headers = {**headers_for(CALL), "Mcp-Method": "tools/call"}
    assert rejection(headers, CALL) == snapshot(
        {"code": -32020, "message": "mcp-method header appears more than once"}
    )


# -- the runner checks them on a connection that carries the request's headers ------------

REGIONAL = types.Tool(
    name="stock",
    input_schema={
        "type": "object",
        "properties": {"title": {"type": "string"}, "region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["title"],
    },
)


async def list_regional(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO, REGIONAL])


def pairs_for(body: dict[str, Any], **overrides: str | None) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, value in headers_for(body, **overrides).items():
        pairs.extend((name, one) for one in ([value] if isinstance(value, str) else value))
    return pairs


async def answer_over_http(body: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, Any] | None:
    async with make_server(on_list_tools=list_regional).running() as runner:
        connection = Connection.for_modern_request(http_headers=pairs)
        return await runner.handle(body, connection, RecordingPeer(headers=dict(pairs)))


STOCK = modern_request(5, "tools/call", {"name": "stock", "arguments": {"title": "Dune", "region": "EU"}})


@pytest.mark.anyio
async def test_the_runner_serves_a_request_whose_headers_agree_with_its_body() -> None:
    answer = await answer_over_http(STOCK, [*pairs_for(STOCK), ("mcp-param-region", "EU")])
    assert answer is not None
    assert "result" in answer


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pairs", "error"),
    [
        (
            pairs_for(CALL, mcp_method="tools/list"),
            {"code": -32020, "message": "mcp-method header does not match the request body's method"},
        ),
        (
            [*pairs_for(CALL), ("mcp-name", "echo")],
            {"code": -32020, "message": "mcp-name header appears more than once"},
        ),
        (
            pairs_for(CALL, mcp_protocol_version=None),
            {
                "code": -32020,
                "message": "mcp-protocol-version header does not match the request envelope's "
                "protocol version",
            },
        ),
    ],
    ids=["method", "repeated name", "no version header"],
)
async def test_the_runner_refuses_routing_headers_that_disagree_with_the_body(
    pairs: list[tuple[str, str]], error: dict[str, Any]
) -> None:
    assert await answer_over_http(CALL, pairs) == {"jsonrpc": "2.0", "id": 1, "error": error}


@pytest.mark.anyio
async def test_the_runner_folds_routing_header_names_in_any_case_on_every_request() -> None:
    repeated = [*pairs_for(CALL), ("MCP-Name", "echo")]
    recased = [("Mcp-Method" if name == "mcp-method" else name, value) for name, value in pairs_for(CALL)]
    for _ in range(2):  # the second time from the names already seen
        assert await answer_over_http(CALL, repeated) == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32020, "message": "mcp-name header appears more than once"},
        }
        answer = await answer_over_http(CALL, recased)
        assert answer is not None
        assert "result" in answer


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            [("mcp-param-region", "US")],
            "Mcp-Param-Region header does not match the request body's 'region' argument",
        ),
        ([], "Mcp-Param-Region header is missing but the request body's 'region' argument is present"),
        (
            [("mcp-param-region", "É")],
            "The mcp-param-region header holds a raw non-ASCII or control character; "
            "send such values Base64-encoded as =?base64?...?=",
        ),
    ],
    ids=["different", "missing", "raw non-ASCII"],
)
async def test_the_runner_refuses_mcp_param_headers_that_disagree_with_the_arguments(
    extra: list[tuple[str, str]], message: str
) -> None:
    answer = await answer_over_http(STOCK, [*pairs_for(STOCK), *extra])
    assert answer == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32020, "message": message}}


@pytest.mark.anyio
async def test_without_http_headers_the_runner_checks_no_headers() -> None:
    async with make_server(on_list_tools=list_regional).running() as runner:
        peer = RecordingPeer(headers={"mcp-method": "tools/list"})
        answer = await runner.handle(STOCK, Connection.for_modern_request(), peer)
    assert answer is not None
    assert "result" in answer


def unreadable_rules(name: str) -> Any:
    msg = f"no rules for {name}"
    raise RuntimeError(msg)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("where", "said"),
    [
        (
            "get_tool_header_params",
            "Mcp-Param header validation skipped: the input schema of 'stock' is unavailable",
        ),
        ("get_tool_input_schema", "get_tool_input_schema('stock') raised; Mcp-Param headers are not checked"),
    ],
)
async def test_header_rules_that_cannot_be_read_skip_the_mcp_param_check_and_say_so(
    where: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    pairs = [*pairs_for(STOCK), ("mcp-param-region", "US")]  # would disagree, were it checked
    async with make_server(on_list_tools=list_regional, **{where: unreadable_rules}).running() as runner:
        connection = Connection.for_modern_request(http_headers=pairs)
        answer = await runner.handle(STOCK, connection, RecordingPeer(headers=dict(pairs)))
    assert answer is not None
    assert "result" in answer
    assert [record.getMessage() for record in caplog.records if record.name == "mcpdi"] == [said]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("sent", "agrees"),
    [("echo", True), ("=?base64?ZWNobw==?=", True), ("=?base64?ZWNobw==?=", False), ("=?", False)],
    ids=["as it is", "as a sentinel", "a sentinel-shaped name sent as it is", "half a sentinel"],
)
async def test_the_runner_compares_mcp_name_as_decoded(sent: str, agrees: bool) -> None:
    name = "echo" if agrees else sent  # a name that looks like a sentinel must itself be encoded
    body = modern_request(6, "tools/call", {"name": name, "arguments": {"text": "hi"}})
    answer = await answer_over_http(body, pairs_for(body, mcp_name=sent))
    assert answer is not None
    if agrees or sent == "=?":
        assert "result" in answer
    else:
        assert answer["error"] == {
            "code": -32020,
            "message": "mcp-name header does not match the request body's 'name' parameter",
        }
