"""The written-out wire check of plain `tools/call` params passes only what the wire type passes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_examples import examples
from mcp_types import methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpdi.lowlevel._envelope import Envelope, read_envelope
from mcpdi.lowlevel._fast_params import tool_call_params_pass
from mcpdi.lowlevel._json_values import equality_is_exact, same_json

VERSIONS = [v for v in KNOWN_PROTOCOL_VERSIONS if ("tools/call", v) in methods.CLIENT_REQUESTS]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}
METAS: list[Any] = [
    ENVELOPE,
    {**ENVELOPE, "progressToken": "t"},
    {**ENVELOPE, "progressToken": 7},
    {**ENVELOPE, "progressToken": True},
    {**ENVELOPE, "progressToken": 1.0},
    {**ENVELOPE, "progressToken": 1.5},
    {**ENVELOPE, "progressToken": None},
    {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}}},
    {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"elicitation": True}},
    {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": 1}}},
    {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}},
    {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": []},
    {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": "bench"}},
    {**ENVELOPE, "io.modelcontextprotocol/logLevel": "debug"},
    {**ENVELOPE, "io.modelcontextprotocol/logLevel": "loud"},
    {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": 20260728},
    {"progressToken": "t"},
    {"progressToken": 1.5},
    {"progressToken": [1]},
    {},
    None,
    [],
    "meta",
]
ARGUMENTS: list[Any] = [{"title": "Dune"}, {}, None, {"a": [1, {"b": None}]}, {1: "x"}, [], "x", {"": True}]
NAMES: list[Any] = ["none", "", 1, None, True, ["none"]]
OTHER_KEYS: list[tuple[str, Any]] = [
    ("task", {"ttl": 5}),
    ("task", "soon"),
    ("inputResponses", {}),
    ("requestState", "s"),
    ("requestState", 1),
    ("input_responses", 1),
    ("note", "ignored by the wire type"),
]


@st.composite
def params(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from([None, [], "params"]))
    out: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        out["name"] = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        out["arguments"] = draw(st.sampled_from(ARGUMENTS))
    if draw(st.integers(0, 3)):
        out["_meta"] = draw(st.sampled_from(METAS))
    if draw(st.integers(0, 4)) == 0:
        key, value = draw(st.sampled_from(OTHER_KEYS))
        out[key] = value
    return out


def wire_type_passes(version: str, raw: Any) -> bool:
    try:
        methods.validate_client_request("tools/call", version, raw)
    except ValidationError:
        return False
    return True


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(VERSIONS), st.lists(params(), min_size=1, max_size=6))
def test_only_params_the_wire_type_passes_pass_the_quick_check(version: str, calls: list[Any]) -> None:
    for raw in calls:  # in a row: the check remembers the last `_meta` that passed
        if tool_call_params_pass(version, raw):
            assert wire_type_passes(version, raw), raw


@pytest.mark.parametrize("version", VERSIONS)
def test_each_meta_after_each_other_passes_only_as_the_wire_type_passes_it(version: str) -> None:
    for first in METAS:
        for second in METAS:
            for meta in (first, second):
                raw = {"name": "none", "_meta": meta}
                if tool_call_params_pass(version, raw):
                    assert wire_type_passes(version, raw), (first, second)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plain_call_passes_the_quick_check_as_it_passes_the_wire_type(version: str) -> None:
    plain = {"name": "none", "arguments": {"title": "Dune"}}
    if version == "2026-07-28":
        plain["_meta"] = ENVELOPE
    for _ in range(2):  # the second time from the remembered `_meta`
        assert tool_call_params_pass(version, plain) is wire_type_passes(version, plain) is True


def test_a_remembered_meta_counts_only_for_an_exactly_equal_one() -> None:
    version = "2026-07-28"
    good = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
    bad = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": 1}}}
    assert tool_call_params_pass(version, {"name": "a", "_meta": good})
    assert good == bad  # `True == 1`: equality alone would let it through
    assert tool_call_params_pass(version, {"name": "a", "_meta": bad}) is wire_type_passes(
        version, {"name": "a", "_meta": bad}
    )
    assert not tool_call_params_pass(version, {"name": "a"})  # no envelope: the wire type refuses it


def envelope_of(raw: Any) -> Envelope | None:
    envelope = read_envelope(raw)
    return envelope if isinstance(envelope, Envelope) else None


def test_each_meta_after_each_other_passes_with_its_envelope_only_as_the_wire_type_passes_it() -> None:
    version = "2026-07-28"
    for first in METAS:
        for second in METAS:
            for meta in (first, second, {**first, "progressToken": 3} if isinstance(first, dict) else first):
                raw = {"name": "none", "_meta": meta}
                envelope = envelope_of(raw)
                if tool_call_params_pass(version, raw, envelope):
                    assert wire_type_passes(version, raw), (first, second)


def test_a_progress_token_that_changes_on_every_call_passes_from_the_envelope_read() -> None:
    version = "2026-07-28"
    tokens: list[Any] = ["t1", 2, "t3", 4, True, 1.5, [1], None, 10**40]
    verdicts: list[tuple[bool, bool]] = []
    envelopes: list[Envelope | None] = []
    for token in tokens:
        raw = {"name": "none", "arguments": {}, "_meta": {**ENVELOPE, "progressToken": token}}
        envelopes.append(envelope_of(raw))
        verdicts.append((tool_call_params_pass(version, raw, envelopes[-1]), wire_type_passes(version, raw)))
    assert all(envelope is envelopes[0] for envelope in envelopes)  # one envelope read for all of them
    # Past a string, an integer or null the wire type decides: it takes True, and 1.5 fails.
    assert verdicts == [(True, True)] * 5 + [(False, False)] * 2 + [(True, True)] * 2


def test_a_remembered_envelope_counts_only_for_exactly_equal_envelope_values() -> None:
    version = "2026-07-28"
    good = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
    bad = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": 1}}}
    null_info = {**ENVELOPE, "io.modelcontextprotocol/clientInfo": None}
    no_info = {key: value for key, value in ENVELOPE.items() if key != "io.modelcontextprotocol/clientInfo"}
    for meta in (good, bad, good, null_info, no_info, null_info, {**good, "note": [1]}):
        raw = {"name": "a", "_meta": meta}
        envelope = envelope_of(raw)
        assert tool_call_params_pass(version, raw, envelope) is wire_type_passes(version, raw), meta
    assert envelope_of({"_meta": null_info}) is not envelope_of({"_meta": no_info})
    assert envelope_of({"_meta": good}) is not envelope_of({"_meta": bad})


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([0.0, 1.0, 1.5]) | st.sampled_from("ab"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(500), deadline=None)
@given(JSON_VALUES, JSON_VALUES)
def test_equality_tells_exact_sameness_only_where_it_is_said_to(value: Any, known: Any) -> None:
    if equality_is_exact(known):
        assert (value == known) is same_json(value, known)
    if same_json(value, known):
        assert value == known


def test_equality_is_exact_for_strings_and_nulls_alone() -> None:
    assert equality_is_exact({"name": "bench", "version": "0", "tags": ["a", None], "more": {}})
    for known in ({"listChanged": True}, [1], {"a": {"b": 1.0}}, 0, False, {1: "x"}):
        assert not equality_is_exact(known)


def test_an_envelope_of_strings_alone_is_read_once_and_not_taken_for_an_unlike_one() -> None:
    text_only = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"experimental": {"x": {}}}}
    first = envelope_of({"_meta": text_only})
    assert first is not None
    assert envelope_of({"_meta": {**text_only, "progressToken": "t"}}) is first  # equal values: the same read
    unlike: list[Any] = [
        {**text_only, "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}},
        {**text_only, "io.modelcontextprotocol/clientInfo": None},
        {**text_only, "io.modelcontextprotocol/logLevel": "debug"},
        {**text_only, "io.modelcontextprotocol/clientCapabilities": {"experimental": {"x": {"y": 1}}}},
    ]
    for meta in unlike:
        envelope_of({"_meta": text_only})
        other = envelope_of({"_meta": meta})
        assert other is not None
        assert other != first, meta
