"""x-mcp-header markings, Mcp-Param-* value encoding, and the -32020 header checks."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from inline_snapshot import snapshot

from mcpdi.lowlevel import (
    HeaderParam,
    MalformedHeaderValue,
    decode_header_value,
    encode_header_value,
    find_invalid_x_mcp_header,
    mcp_param_headers,
    validate_mcp_param_headers,
    x_mcp_header_params,
)


def tool_schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


QUERY = tool_schema(
    title={"type": "string"},
    region={"type": "string", "x-mcp-header": "Region"},
    limit={"type": "integer", "x-mcp-header": "Limit", "default": 10},
    dry={"type": "boolean", "x-mcp-header": "Dry"},
)


# --- markings ---------------------------------------------------------------------------------


def test_each_invalid_marking_is_explained_with_the_reference_reason() -> None:
    cases: dict[str, dict[str, Any]] = {
        "float": tool_schema(x={"type": "number", "x-mcp-header": "X"}),
        "list": tool_schema(tags={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Tags"}),
        "optional": tool_schema(
            region={"anyOf": [{"type": "string"}, {"type": "null"}], "x-mcp-header": "Region"}
        ),
        "enum by reference": tool_schema(colour={"$ref": "#/$defs/Colour", "x-mcp-header": "Colour"}),
        "type list": tool_schema(region={"type": ["string", "null"], "x-mcp-header": "Region"}),
        "nested model": tool_schema(
            filter={"$ref": "#/$defs/Filter"},
        )
        | {"$defs": {"Filter": tool_schema(region={"type": "string", "x-mcp-header": "Region"})}},
        "array items": tool_schema(
            regions={"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}
        ),
        "inside anyOf": tool_schema(
            filter={"anyOf": [tool_schema(region={"type": "string", "x-mcp-header": "Region"})]}
        ),
        "on the root": {"type": "object", "x-mcp-header": "Root"},
        "space": tool_schema(region={"type": "string", "x-mcp-header": "My Region"}),
        "colon": tool_schema(region={"type": "string", "x-mcp-header": "Region:"}),
        "empty": tool_schema(region={"type": "string", "x-mcp-header": ""}),
        "non-ASCII": tool_schema(region={"type": "string", "x-mcp-header": "Région"}),
        "not a string": tool_schema(region={"type": "string", "x-mcp-header": 5}),
        "duplicate": tool_schema(
            a={"type": "string", "x-mcp-header": "Region"},
            b={"type": "string", "x-mcp-header": "region"},
        ),
        "unsafe integer": tool_schema(n={"type": "integer", "default": 2**53, "x-mcp-header": "N"}),
        "unsafe enum": tool_schema(n={"type": "integer", "enum": [1, -(2**60)], "x-mcp-header": "N"}),
    }

    reasons = {name: find_invalid_x_mcp_header(schema) for name, schema in cases.items()}

    assert reasons == snapshot(
        {
            "float": (
                "property 'x': x-mcp-header is only permitted on integer/string/boolean properties "
                "(got 'number')"
            ),
            "list": (
                "property 'tags': x-mcp-header is only permitted on integer/string/boolean properties "
                "(got 'array')"
            ),
            "optional": (
                "property 'region': x-mcp-header is only permitted on integer/string/boolean properties "
                "(the type keyword is NoneType, not a string)"
            ),
            "enum by reference": (
                "property 'colour': x-mcp-header is only permitted on integer/string/boolean properties "
                "(the type keyword is NoneType, not a string)"
            ),
            "type list": (
                "property 'region': x-mcp-header is only permitted on integer/string/boolean properties "
                "(the type keyword is list, not a string)"
            ),
            "nested model": (
                "x-mcp-header found at a schema position not reachable via a pure `properties` chain"
            ),
            "array items": (
                "x-mcp-header found at a schema position not reachable via a pure `properties` chain"
            ),
            "inside anyOf": (
                "x-mcp-header found at a schema position not reachable via a pure `properties` chain"
            ),
            "on the root": (
                "x-mcp-header found at a schema position not reachable via a pure `properties` chain"
            ),
            "space": "property 'region': x-mcp-header 'My Region' is not an RFC 9110 token",
            "colon": "property 'region': x-mcp-header 'Region:' is not an RFC 9110 token",
            "empty": "property 'region': x-mcp-header '' is not an RFC 9110 token",
            "non-ASCII": "property 'region': x-mcp-header 'Région' is not an RFC 9110 token",
            "not a string": "property 'region': x-mcp-header must be a string, not int",
            "duplicate": "x-mcp-header 'Region' on property 'a' duplicates property 'b'",
            "unsafe integer": (
                "property 'n': x-mcp-header is only permitted on integers within ±(2^53−1), but its "
                "default lies outside"
            ),
            "unsafe enum": (
                "property 'n': x-mcp-header is only permitted on integers within ±(2^53−1), but its enum "
                "lies outside"
            ),
        }
    )


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(QUERY, id="string, integer and boolean"),
        pytest.param(
            tool_schema(region={"type": "string", "enum": ["eu", "us"], "x-mcp-header": "Region"}),
            id="literal",
        ),
        pytest.param(
            tool_schema(region={"type": "string", "maxLength": 8, "x-mcp-header": "R"}), id="constrained"
        ),
        pytest.param(
            tool_schema(n={"type": "integer", "default": 2**53 - 1, "x-mcp-header": "N"}), id="safe max"
        ),
        pytest.param(
            tool_schema(filter=tool_schema(region={"type": "string", "x-mcp-header": "Region"})),
            id="nested through properties only",
        ),
        pytest.param(
            tool_schema(
                meta={"type": "object", "default": {"x-mcp-header": 5}, "examples": [{"x-mcp-header": ""}]}
            ),
            id="data keywords are not schema positions",
        ),
        pytest.param(
            tool_schema(x={"type": "string", "x-mcp-header": "Mcp-Param-X"}), id="token with the prefix"
        ),
        pytest.param({}, id="empty schema"),
    ],
)
def test_valid_markings_have_no_reason(schema: dict[str, Any]) -> None:
    assert find_invalid_x_mcp_header(schema) is None


def test_a_schema_that_is_not_an_object_has_no_markings() -> None:
    assert find_invalid_x_mcp_header(None) is None  # type: ignore[arg-type]
    assert x_mcp_header_params([]) == ()  # type: ignore[arg-type]


def test_deeply_nested_schemas_are_walked_without_recursion() -> None:
    schema: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"p": schema}}

    assert find_invalid_x_mcp_header(schema) is None
    (param,) = x_mcp_header_params(schema)
    assert len(param.path) == 5000


def test_header_params_name_the_header_the_path_and_the_type_in_schema_order() -> None:
    schema = tool_schema(
        region={"type": "string", "x-mcp-header": "Region"},
        title={"type": "string"},
        filter=tool_schema(dry={"type": "boolean", "x-mcp-header": "dry-run"}),
        limit={"type": "integer", "x-mcp-header": "Limit"},
    )

    params = x_mcp_header_params(schema)

    assert params == (
        HeaderParam("Mcp-Param-Region", ("region",), "string"),
        HeaderParam("Mcp-Param-dry-run", ("filter", "dry"), "boolean"),
        HeaderParam("Mcp-Param-Limit", ("limit",), "integer"),
    )
    assert [(p.token, p.argument) for p in params] == [
        ("Region", "region"),
        ("dry-run", "filter.dry"),
        ("Limit", "limit"),
    ]


def test_an_invalid_schema_mirrors_no_headers() -> None:
    schema = tool_schema(
        region={"type": "string", "x-mcp-header": "Region"},
        ratio={"type": "number", "x-mcp-header": "Ratio"},
    )

    assert x_mcp_header_params(schema) == ()
    assert mcp_param_headers(schema, {"region": "eu", "ratio": 0.5}) == {}
    assert validate_mcp_param_headers(schema, {"region": "eu"}, [("Mcp-Param-Region", "us")]) is None


# --- value encoding ---------------------------------------------------------------------------

SPEC_EXAMPLES = [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("us west 1", "us west 1"),
    ("", ""),
    ("Zürich", "=?base64?WsO8cmljaA==?="),
    ("tab\there", "=?base64?dGFiCWhlcmU=?="),
    ("=?base64??=", "=?base64?PT9iYXNlNjQ/Pz0=?="),
]


@pytest.mark.parametrize(("value", "header"), SPEC_EXAMPLES)
def test_strings_encode_as_the_spec_examples(value: str, header: str) -> None:
    assert encode_header_value(value) == header


@pytest.mark.parametrize(("value", "header"), SPEC_EXAMPLES)
def test_spec_example_headers_decode_to_their_strings(value: str, header: str) -> None:
    assert decode_header_value(header) == value


@pytest.mark.parametrize(
    ("value", "header"),
    [(42, "42"), (-7, "-7"), (0, "0"), (True, "true"), (False, "false")],
)
def test_integers_are_decimal_and_booleans_lowercase(value: int | bool, header: str) -> None:
    assert encode_header_value(value) == header


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("=?BASE64?SGk=?=", id="uppercase marker"),
        pytest.param("=?base64?SGk=", id="no end marker"),
        pytest.param("SGk=?=", id="no start marker"),
        pytest.param("=?base64?=", id="markers overlap"),
        pytest.param("plain value", id="plain"),
    ],
)
def test_values_without_both_lowercase_markers_are_literals(raw: str) -> None:
    assert decode_header_value(raw) == raw


def test_malformed_sentinels_are_refused_with_what_is_wrong() -> None:
    raws = [
        "=?base64?SGVsbG8?=",  # padding missing
        "=?base64?SGVsbG9=?=",  # non-zero padding bits
        "=?base64?SGV sbG8=?=",  # a space
        "=?base64?SGVs_G8=?=",  # the URL-safe alphabet
        "=?base64?/w==?=",  # 0xFF is not UTF-8
        "=?base64?wqkÄ?=",  # non-ASCII payload
    ]
    problems: list[str] = []
    for raw in raws:
        with pytest.raises(MalformedHeaderValue) as caught:
            decode_header_value(raw)
        assert caught.value.raw == raw
        problems.append(caught.value.problem)

    assert problems == snapshot(
        [
            "the payload is not Base64",
            "the payload is not canonical Base64",
            "the payload is not Base64",
            "the payload is not Base64",
            "the payload is not UTF-8",
            "the payload is not Base64",
        ]
    )
    assert str(MalformedHeaderValue("=?base64?/w==?=", "the payload is not UTF-8")) == snapshot(
        "header value '=?base64?/w==?=' carries a malformed base64 sentinel: the payload is not UTF-8"
    )


@given(st.text())
def test_any_text_round_trips_through_a_header_safe_value(text: str) -> None:
    header = encode_header_value(text)

    assert all(" " <= char <= "~" for char in header)
    assert header == header.strip()
    assert decode_header_value(header) == text


@given(st.text())
def test_decoding_arbitrary_headers_either_yields_text_or_says_malformed(raw: str) -> None:
    try:
        decoded = decode_header_value(raw)
    except MalformedHeaderValue:
        return
    assert isinstance(decoded, str)


@given(st.binary())
def test_decoding_arbitrary_sentinel_payloads_either_yields_text_or_says_malformed(payload: bytes) -> None:
    raw = "=?base64?" + payload.decode("latin-1") + "?="
    with contextlib.suppress(MalformedHeaderValue):
        decode_header_value(raw)


# --- client side: which headers to send -------------------------------------------------------


def test_the_client_mirrors_present_arguments_and_omits_absent_or_null_ones() -> None:
    assert mcp_param_headers(QUERY, {"title": "x", "region": "Zürich", "limit": 5, "dry": True}) == {
        "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
        "Mcp-Param-Limit": "5",
        "Mcp-Param-Dry": "true",
    }
    assert mcp_param_headers(QUERY, {"title": "x", "region": None}) == {}
    assert mcp_param_headers(QUERY, None) == {}


def test_the_client_mirrors_nested_arguments_and_skips_non_scalars() -> None:
    schema = tool_schema(
        filter=tool_schema(region={"type": "string", "x-mcp-header": "Region"}),
        n={"type": "integer", "x-mcp-header": "N"},
    )

    assert mcp_param_headers(schema, {"filter": {"region": "eu"}, "n": 3.0}) == {
        "Mcp-Param-Region": "eu",
        "Mcp-Param-N": "3",
    }
    assert mcp_param_headers(schema, {"filter": "eu", "n": [3]}) == {}


def test_precomputed_params_give_the_same_headers_as_the_schema() -> None:
    arguments = {"region": "eu", "limit": 5, "dry": False}

    assert mcp_param_headers(x_mcp_header_params(QUERY), arguments) == mcp_param_headers(QUERY, arguments)


# --- server side: the -32020 check ------------------------------------------------------------


def check(arguments: dict[str, Any] | None, *headers: tuple[str, str]) -> str | None:
    return validate_mcp_param_headers(QUERY, arguments, headers)


def test_matching_headers_pass() -> None:
    arguments = {"title": "t", "region": "us-west1", "limit": 5, "dry": False}
    headers = [("Mcp-Param-Region", "us-west1"), ("Mcp-Param-Limit", "5"), ("Mcp-Param-Dry", "false")]

    assert check(arguments, *headers) is None


def test_header_names_match_in_any_case() -> None:
    assert check({"region": "eu"}, ("mcp-param-region", "eu")) is None
    assert check({"region": "eu"}, ("MCP-PARAM-REGION", "eu")) is None


def test_a_base64_header_is_compared_after_decoding() -> None:
    assert check({"region": "Zürich"}, ("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")) is None


@pytest.mark.parametrize("header", ["5", "5.0", "5.000", "05"])
def test_integers_compare_numerically_for_canonical_decimals(header: str) -> None:
    assert check({"limit": 5}, ("Mcp-Param-Limit", header)) is None


@pytest.mark.parametrize("header", ["5.5", "5e0", "0x5", " 5", "five", "6"])
def test_other_integer_spellings_do_not_match(header: str) -> None:
    assert check({"limit": 5}, ("Mcp-Param-Limit", header)) == snapshot(
        "Mcp-Param-Limit header does not match the request body's 'limit' argument"
    )


def test_an_integral_float_body_value_compares_as_an_integer() -> None:
    assert check({"limit": 5.0}, ("Mcp-Param-Limit", "5")) is None


def test_absent_or_null_arguments_without_headers_pass() -> None:
    assert check({"title": "t"}) is None
    assert check({"region": None}) is None
    assert check(None) is None


def test_headers_the_schema_does_not_mark_are_ignored() -> None:
    assert check({}, ("Mcp-Param-Other", "x"), ("Mcp-Param-Other", "y")) is None


def test_each_disagreement_has_the_exact_rejection_message() -> None:
    messages = {
        "missing": check({"region": "us-west1"}),
        "differs": check({"region": "us-west1"}, ("Mcp-Param-Region", "us-east1")),
        "different case": check({"region": "us-west1"}, ("Mcp-Param-Region", "US-WEST1")),
        "boolean spelled True": check({"dry": True}, ("Mcp-Param-Dry", "True")),
        "absent but defaulted": check({}, ("Mcp-Param-Limit", "10")),
        "null": check({"region": None}, ("Mcp-Param-Region", "eu")),
        "malformed": check({"region": "Hello"}, ("Mcp-Param-Region", "=?base64?SGVsbG8?=")),
        "repeated": check({"region": "eu"}, ("Mcp-Param-Region", "eu"), ("mcp-param-region", "eu")),
        "non-scalar body": check({"region": ["eu"]}, ("Mcp-Param-Region", "eu")),
    }

    assert messages == snapshot(
        {
            "missing": (
                "Mcp-Param-Region header is missing but the request body's 'region' argument is present"
            ),
            "differs": "Mcp-Param-Region header does not match the request body's 'region' argument",
            "different case": "Mcp-Param-Region header does not match the request body's 'region' argument",
            "boolean spelled True": "Mcp-Param-Dry header does not match the request body's 'dry' argument",
            "absent but defaulted": (
                "Mcp-Param-Limit header is present but the request body's 'limit' argument is absent"
            ),
            "null": "Mcp-Param-Region header is present but the request body's 'region' argument is absent",
            "malformed": "Mcp-Param-Region header carries a malformed base64 sentinel value",
            "repeated": "Mcp-Param-Region header appears more than once",
            "non-scalar body": "Mcp-Param-Region header does not match the request body's 'region' argument",
        }
    )


def test_nested_arguments_are_named_by_their_dotted_path() -> None:
    schema = tool_schema(filter=tool_schema(region={"type": "string", "x-mcp-header": "Region"}))

    assert validate_mcp_param_headers(schema, {"filter": {"region": "eu"}}, []) == snapshot(
        "Mcp-Param-Region header is missing but the request body's 'filter.region' argument is present"
    )


def test_a_huge_integer_header_does_not_crash_the_check() -> None:
    assert check({"limit": 5}, ("Mcp-Param-Limit", "9" * 10_000)) == snapshot(
        "Mcp-Param-Limit header does not match the request body's 'limit' argument"
    )


@given(
    region=st.one_of(st.none(), st.text()),
    limit=st.one_of(st.none(), st.integers()),
    dry=st.one_of(st.none(), st.booleans()),
)
def test_headers_a_client_builds_always_pass_the_server_check(
    region: str | None, limit: int | None, dry: bool | None
) -> None:
    arguments = {"region": region, "limit": limit, "dry": dry}

    headers = mcp_param_headers(QUERY, arguments)

    assert validate_mcp_param_headers(QUERY, arguments, headers.items()) is None
    assert validate_mcp_param_headers(QUERY, arguments, [(k.lower(), v) for k, v in headers.items()]) is None
