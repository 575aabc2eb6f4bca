"""The wire form of plain `tools/call` results (text blocks and JSON), known without pydantic.

`Runner._sieve` validates every spec result against the schema of the negotiated version and
dumps it again; for the commonest result (text content, `{"result": ...}` structured content,
the server-info stamp) that costs more than the tool. `sieve_plain_tool_result` recognises
exactly the results whose sieved form it can write down (same keys, same order, same values)
and returns None for everything else, which then takes the full path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from mcp_types import SERVER_INFO_META_KEY

from mcpdi.lowlevel._json_values import copy_json
from mcpdi.lowlevel._jsonrpc import NATIVE_INT_LIMIT, NativeJSON
from mcpdi.lowlevel._wire_methods import methods

__all__ = ("sieve_plain_tool_result", "sieve_stamped_tool_result")

_METHOD: Final = "tools/call"
_KEYS: Final = frozenset({"_meta", "content", "isError", "resultType", "structuredContent"})
_SCALARS: Final = (str, int, bool, type(None))
_WRITE_ORDER: Final = ("_meta", "content", "isError", "resultType", "structuredContent")
"""The order `_sieve_with` writes a result's fields in."""


_Stamp = tuple[Mapping[str, Any], dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]


@dataclass(slots=True)
class _Shape:
    """What the full sieve does at one version, read off its own output for a probe."""

    result_keys: tuple[str, ...]  # in the order the sieve writes them
    block_keys: tuple[str, ...]
    keeps_result_type: bool
    in_write_order: bool  # `result_keys` come in `_WRITE_ORDER` (every version so far): no reordering
    # The last `_meta` seen and its sieved form, replaced as one value (threads may share this).
    meta: tuple[dict[str, Any], dict[str, Any]] | None = None
    # The last server info stamped alone, a copy of it, its sieved `_meta` (None: not plain), and
    # that `_meta`'s one entry, the sieved server info, when it holds nothing else.
    stamp: _Stamp | None = None


_shapes: dict[str, _Shape | None] = {}


def _shape(version: str) -> _Shape | None:
    if version in _shapes:
        return _shapes[version]
    probe: dict[str, Any] = {
        "content": [{"type": "text", "text": ""}],
        "structuredContent": {"result": ""},
        "isError": False,
        "resultType": "complete",
        "_meta": {},
    }
    try:
        out = methods().serialize_server_result(_METHOD, version, probe)
    except (KeyError, ValueError):  # not a version with tools/call: the full path answers
        shape = None
    else:
        block_keys = tuple(out["content"][0])
        plain = len(block_keys) == 2
        keys = tuple(out)
        in_order = keys == tuple(key for key in _WRITE_ORDER if key in keys)
        shape = _Shape(keys, block_keys, "resultType" in out, in_order) if plain else None
    _shapes[version] = shape
    return shape


def _is_plain_json(value: Any) -> bool:
    """Whether the sieve keeps `value` as it is: str keys, JSON scalars, finite floats, lists, dicts."""
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _SCALARS:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_is_plain_json(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _is_plain_json(item) for key, item in value.items())
    return False


def _is_string_tree(meta: dict[str, Any]) -> bool:
    """Whether `meta` holds only strings and objects of strings (as a server-info stamp does).

    For such values `==` is exact (no `true == 1`), so a cached sieve of an equal one applies.
    """
    value: Any
    for key, value in meta.items():
        if type(key) is not str:
            return False
        kind = type(value)  # pyright: ignore[reportUnknownVariableType]
        if kind is dict:
            for inner_key, inner in value.items():
                if type(inner_key) is not str or type(inner) is not str:
                    return False
        elif kind is not str:
            return False
    return True


def _flat_copy(fields: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of an object of str keys and JSON scalars, its ints within `NATIVE_INT_LIMIT` (what a
    `NativeJSON` may hold); None when it holds anything else."""
    for key, value in fields.items():
        kind = type(value)  # pyright: ignore[reportUnknownVariableType]
        if type(key) is not str or kind not in _SCALARS:
            return None
        if kind is int and not -NATIVE_INT_LIMIT < value < NATIVE_INT_LIMIT:
            return None
    return dict(fields)


def _sieve_meta(version: str, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The full sieve's `_meta` for `meta`, when both are string trees; None otherwise."""
    if not _is_string_tree(meta):
        return None
    probe: dict[str, Any] = {"content": [], "resultType": "complete", "_meta": meta}
    try:
        out = methods().serialize_server_result(_METHOD, version, probe)
    except ValueError:  # pydantic's ValidationError included: the full path reports it
        return None
    sieved = out.get("_meta")
    if type(sieved) is not dict or not _is_string_tree(cast("dict[str, Any]", sieved)):
        return None
    return cast("dict[str, Any]", sieved)


def _fresh(sieved: dict[str, Any]) -> dict[str, Any]:
    """Each response gets its own objects, as from the full sieve (a string tree is two deep)."""
    fresh: dict[str, Any] = {}
    for key, value in sieved.items():
        fresh[key] = value.copy() if type(value) is dict else value
    return fresh


def _sieved_meta(shape: _Shape, version: str, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The sieved `_meta`: its schema differs by version, so the full sieve decides it, once per value."""
    if not _is_string_tree(meta):
        return None
    known = shape.meta
    if known is None or meta != known[0]:
        sieved = _sieve_meta(version, meta)
        if sieved is None:
            return None
        known = shape.meta = (copy_json(meta), sieved)
    return _fresh(known[1])


def _sieved_stamp(shape: _Shape, version: str, server_info: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sieved `_meta` of a result stamped with `server_info` alone, sieved once per server."""
    known = shape.stamp
    if known is None or known[0] is not server_info or server_info != known[1]:
        stamp = {SERVER_INFO_META_KEY: dict(server_info)}
        info = copy_json(stamp[SERVER_INFO_META_KEY])
        sieved = _sieve_meta(version, stamp)
        only: Any = sieved.get(SERVER_INFO_META_KEY) if sieved is not None and len(sieved) == 1 else None
        alone = cast("dict[str, Any]", only) if type(only) is dict else None
        known = shape.stamp = (server_info, info, sieved, alone)
    if known[3] is not None:  # `_fresh` of the commonest stamp: the server's info alone
        return {SERVER_INFO_META_KEY: known[3].copy()}
    return None if known[2] is None else _fresh(known[2])


def _sieve_fields_into(
    sieved: dict[str, Any], shape: _Shape, result: dict[str, Any], result_type: object
) -> bool | None:
    """Write the sieved `content`, `isError`, `resultType` and `structuredContent` of a plain result
    into `sieved` (in `_WRITE_ORDER`); whether they are what a `NativeJSON` may hold, None when
    the result is not plain."""
    content: Any = result.get("content")
    if type(content) is not list:
        return None
    first, second = shape.block_keys
    blocks: list[dict[str, Any]] = []
    native = True
    for item in cast("list[Any]", content):
        block: dict[str, Any] = item
        if type(block) is not dict or len(block) != 2:  # pyright: ignore[reportUnnecessaryComparison]
            return None
        kind = block.get("type")
        if kind != "text" or type(block.get("text")) is not str:
            return None
        if type(kind) is not str:  # equal to "text", yet a subclass
            native = False
        blocks.append({first: block[first], second: block[second]})
    sieved["content"] = blocks
    if "isError" in result:
        if type(result["isError"]) is not bool:
            return None
        sieved["isError"] = result["isError"]
    if shape.keeps_result_type:
        if type(result_type) is not str:
            return None
        sieved["resultType"] = result_type
    if "structuredContent" in result:
        structured: dict[str, Any] = result["structuredContent"]
        if type(structured) is not dict:  # pyright: ignore[reportUnnecessaryComparison]
            return None
        copied = _flat_copy(structured)
        if copied is None:
            if not _is_plain_json(structured):
                return None
            copied = copy_json(structured)
            native = False  # floats, say
        sieved["structuredContent"] = copied
    return native


def _sieve_with(
    version: str,
    result: dict[str, Any],
    result_type: object,
    own_meta: dict[str, Any] | None = None,
    server_info: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The plain sieve of `result`, its `resultType` `result_type` and its `_meta` the sieved
    `own_meta`, or else the server's stamp of `server_info`, or else none; None when the result
    is not plain."""
    shape = _shape(version)
    if shape is None:
        return None
    sieved: dict[str, Any] = NativeJSON()
    if own_meta is not None or server_info is not None:
        meta = (
            _sieved_meta(shape, version, own_meta)
            if own_meta is not None
            else _sieved_stamp(shape, version, cast("Mapping[str, Any]", server_info))
        )
        if meta is None:
            return None
        sieved["_meta"] = meta  # a string tree: native
    native = _sieve_fields_into(sieved, shape, result, result_type)
    if native is None:
        return None
    if not shape.in_write_order:
        ordered: dict[str, Any] = NativeJSON()
        for key in shape.result_keys:
            if key in sieved:
                ordered[key] = sieved[key]
        sieved = ordered
    return sieved if native else dict(sieved)


def sieve_plain_tool_result(version: str, result: dict[str, Any]) -> dict[str, Any] | None:
    """`methods.serialize_server_result("tools/call", version, result)` for a plain result, else None.

    Plain: only text blocks (`type` and `text`, nothing else), `isError` a bool,
    `structuredContent` and `_meta` objects of plain JSON, and (where the version has it) a
    string `resultType`.
    """
    if not result.keys() <= _KEYS:
        return None
    if "_meta" not in result:
        return _sieve_with(version, result, result.get("resultType"))
    raw_meta: dict[str, Any] = result["_meta"]
    if type(raw_meta) is not dict:  # pyright: ignore[reportUnnecessaryComparison]
        return None
    return _sieve_with(version, result, result.get("resultType"), raw_meta)


def sieve_stamped_tool_result(
    version: str, result: dict[str, Any], server_info: Mapping[str, Any]
) -> dict[str, Any] | None:
    """`sieve_plain_tool_result` of `result` once `stamp_modern_result` stamped it with `server_info`
    (`tools/call` results carry no cache hints), for a complete result with no `_meta` of its
    own; None for every other (stamp it, then sieve it). `result` is left as it is.

    Such a result's `_meta` is the server's stamp alone, the same on every call: its sieved
    form is kept per version and server instead of built and sieved per call.
    """
    if result.get("_meta") is not None or not result.keys() <= _KEYS:
        return None
    result_type = result.get("resultType", "complete")
    if result_type != "complete":
        return None
    return _sieve_with(version, result, result_type, None, server_info)
