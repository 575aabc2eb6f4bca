"""What a 2026-07-28 HTTP request must show before it is served: headers that agree with its body.

The runner runs these on a connection that carries the request's headers
(`Connection.for_modern_request(http_headers=...)`), before the envelope is read, so every HTTP
transport on `mcpdi.lowlevel` gets them: the routing headers against the envelope and method
(protocol.md §2.6), then a `tools/call`'s `Mcp-Param-*` headers against its arguments.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from mcpdi.lowlevel._envelope import ROUTING_HEADERS, check_routing
from mcpdi.lowlevel._errors import HEADER_MISMATCH, MCPError
from mcpdi.lowlevel._param_headers import validate_mcp_param_headers

if TYPE_CHECKING:
    from mcpdi.lowlevel._connection import Peer
    from mcpdi.lowlevel._jsonrpc import Request
    from mcpdi.lowlevel._param_headers import HeaderRules
    from mcpdi.lowlevel._runner import Runner

__all__ = ("PendingParamCheck", "http_request_problem")

logger = logging.getLogger("mcpdi")


@dataclass(frozen=True, slots=True)
class PendingParamCheck:
    """The `Mcp-Param-*` check of a `tools/call` whose header rules only the server's tool listing
    has (`Runner.tool_header_rules`): `problem` finishes it."""

    name: str
    meta: Mapping[str, Any] | None
    arguments: Mapping[str, Any] | None
    headers: Sequence[tuple[str, str]]

    async def problem(self, runner: Runner[Any], peer: Peer) -> MCPError | None:
        """`-32020` when the headers disagree with the arguments, else None."""
        try:
            rules = await runner.tool_header_rules(self.name, meta=self.meta, peer=peer)
        except Exception:
            _log_skipped(self.name)
            return None
        return _rules_problem(rules, self.arguments, self.headers)


def http_request_problem(
    runner: Runner[Any], request: Request, headers: Sequence[tuple[str, str]]
) -> MCPError | PendingParamCheck | None:
    """The first way `request`'s HTTP headers disagree with its body, or None (rungs in the
    reference order: routing headers and envelope, then `Mcp-Param-*`).

    A `PendingParamCheck` when only the server's tool listing can tell (a server without
    precomputed header rules): await its `problem`.
    """
    folded, duplicated, params_sent = _fold_headers(headers)
    problem = check_routing(folded, duplicated, request.method, request.params)
    if problem is not None or request.method != "tools/call":
        return problem
    params = request.params
    if params is None:
        return None
    name = params.get("name")
    arguments = params.get("arguments")
    if type(name) is not str and not isinstance(name, str):
        return None
    if arguments is not None and type(arguments) is not dict and not isinstance(arguments, Mapping):
        return None
    if params_sent is not None:
        for header in params_sent:
            if not (header[1].isascii() and header[1].isprintable()):
                # Header bytes are read as latin-1: a raw non-ASCII byte is no valid value. The
                # spec sends non-ASCII text as `=?base64?...?=`.
                msg = (
                    f"The {header[0]} header holds a raw non-ASCII or control character; "
                    "send such values Base64-encoded as =?base64?...?="
                )
                return MCPError(HEADER_MISMATCH, msg)
    elif not arguments:
        return None
    checked = cast("Mapping[str, Any] | None", arguments)
    getter = runner.server.get_tool_header_params  # the rules read at registration, when it has them
    if getter is None:
        meta = params.get("_meta")
        meta = cast("Mapping[str, Any]", meta) if isinstance(meta, Mapping) else None
        return PendingParamCheck(name, meta, checked, headers)
    try:
        rules = getter(name)
    except Exception:
        _log_skipped(name)
        return None
    return _rules_problem(rules, checked, headers)


_PARAM: Final = "mcp-param-"
_NAMES_LIMIT: Final = 1024
_name_kinds: dict[str, str] = {}
"""Header names as sent to what each is to `_fold_headers`: its lower-cased form for a routing
header, `_PARAM` for an `Mcp-Param-*` one, "" for any other. A client sends the same names on
every request, so each is classified once (bounded: emptied when full)."""


def _name_kind(raw_name: str) -> str:
    name = raw_name.lower()
    kind = name if name in ROUTING_HEADERS else _PARAM if raw_name.startswith(_PARAM) else ""
    if len(_name_kinds) >= _NAMES_LIMIT:
        _name_kinds.clear()
    _name_kinds[raw_name] = kind
    return kind


def _fold_headers(
    headers: Sequence[tuple[str, str]],
) -> tuple[dict[str, str], str | None, list[tuple[str, str]] | None]:
    """`(lower-cased name, value)` pairs as the first value of each routing header, the name of a
    routing header sent more than once, and the `Mcp-Param-*` headers sent (None: none)."""
    folded: dict[str, str] = {}
    duplicated: str | None = None
    params_sent: list[tuple[str, str]] | None = None
    known = _name_kinds.get
    for raw_name, value in headers:
        kind = known(raw_name)
        if kind is None:
            kind = _name_kind(raw_name)
        if not kind:
            continue
        if kind is _PARAM:
            if params_sent is None:
                params_sent = []
            params_sent.append((raw_name, value))
        elif kind in folded:
            duplicated = duplicated or kind
        else:
            folded[kind] = value
    return folded, duplicated, params_sent


def _log_skipped(name: str) -> None:
    # Header validation must never break a working call: skip it, loudly.
    logger.exception("Mcp-Param header validation skipped: the input schema of %r is unavailable", name)


def _rules_problem(
    rules: HeaderRules | None, arguments: Mapping[str, Any] | None, headers: Sequence[tuple[str, str]]
) -> MCPError | None:
    """`-32020` when a `tools/call`'s `Mcp-Param-*` headers disagree with its arguments."""
    if not rules:
        return None  # unknown tool, or one that mirrors no argument (other headers are ignored)
    problem = validate_mcp_param_headers(rules, arguments, headers)
    return MCPError(HEADER_MISMATCH, problem) if problem is not None else None
