"""mcpdi.lowlevel: the public sans-IO protocol layer.

This is the one door between the MCP layer and any transport. A transport reads bytes,
classifies each message (`classify_message`), hands requests to a `Runner` bound to a
`Connection`, and writes the response objects it returns; the core never touches a socket.
`mcpdi_transport` is built on these names alone, and so can any other transport.

A client's side of a 2026-07-28 multi-round request is here too (`drive_rounds`): every client
of mcpdi, over a transport or in memory, answers `inputRequests` with this one loop.

Names load on first use (PEP 562), as `mcpdi`'s own do: a server answering over stdio never
loads what only a client or an HTTP transport uses. `_HOMES` is the one name table.
"""

from __future__ import annotations

import typing as _typing

from mcpdi._collector import load_name as _load_name

if _typing.TYPE_CHECKING:
    from mcpdi._collector import collector_paused as collector_paused
    from mcpdi.lowlevel._client_rounds import AnswerInputRequest as AnswerInputRequest
    from mcpdi.lowlevel._client_rounds import InputRequired as InputRequired
    from mcpdi.lowlevel._client_rounds import RoundLimitExceeded as RoundLimitExceeded
    from mcpdi.lowlevel._client_rounds import RoundRequest as RoundRequest
    from mcpdi.lowlevel._client_rounds import drive_rounds as drive_rounds
    from mcpdi.lowlevel._client_rounds import read_input_required as read_input_required
    from mcpdi.lowlevel._connection import Connection as Connection
    from mcpdi.lowlevel._connection import Era as Era
    from mcpdi.lowlevel._connection import Peer as Peer
    from mcpdi.lowlevel._context import ServerRequestContext as ServerRequestContext
    from mcpdi.lowlevel._envelope import check_modern_http_request as check_modern_http_request
    from mcpdi.lowlevel._envelope import unsupported_version as unsupported_version
    from mcpdi.lowlevel._errors import HEADER_MISMATCH as HEADER_MISMATCH
    from mcpdi.lowlevel._errors import INTERNAL_ERROR as INTERNAL_ERROR
    from mcpdi.lowlevel._errors import INVALID_PARAMS as INVALID_PARAMS
    from mcpdi.lowlevel._errors import INVALID_REQUEST as INVALID_REQUEST
    from mcpdi.lowlevel._errors import METHOD_NOT_FOUND as METHOD_NOT_FOUND
    from mcpdi.lowlevel._errors import MISSING_CAPABILITY as MISSING_CAPABILITY
    from mcpdi.lowlevel._errors import PARSE_ERROR as PARSE_ERROR
    from mcpdi.lowlevel._errors import UNSUPPORTED_VERSION as UNSUPPORTED_VERSION
    from mcpdi.lowlevel._errors import MCPError as MCPError
    from mcpdi.lowlevel._errors import NoBackChannel as NoBackChannel
    from mcpdi.lowlevel._errors import http_status_for as http_status_for
    from mcpdi.lowlevel._extension_identifier import (
        validate_extension_identifier as validate_extension_identifier,
    )
    from mcpdi.lowlevel._fast_sieve import sieve_plain_tool_result as sieve_plain_tool_result
    from mcpdi.lowlevel._http_scope import current_http_scope as current_http_scope
    from mcpdi.lowlevel._http_scope import serving_http_request as serving_http_request
    from mcpdi.lowlevel._jsonrpc import Invalid as Invalid
    from mcpdi.lowlevel._jsonrpc import Notification as Notification
    from mcpdi.lowlevel._jsonrpc import Request as Request
    from mcpdi.lowlevel._jsonrpc import RequestId as RequestId
    from mcpdi.lowlevel._jsonrpc import Response as Response
    from mcpdi.lowlevel._jsonrpc import classify_message as classify_message
    from mcpdi.lowlevel._jsonrpc import encode_message as encode_message
    from mcpdi.lowlevel._jsonrpc import error_from_object as error_from_object
    from mcpdi.lowlevel._jsonrpc import error_response as error_response
    from mcpdi.lowlevel._jsonrpc import is_request_id as is_request_id
    from mcpdi.lowlevel._jsonrpc import notification_message as notification_message
    from mcpdi.lowlevel._jsonrpc import parse_json as parse_json
    from mcpdi.lowlevel._jsonrpc import request_message as request_message
    from mcpdi.lowlevel._jsonrpc import result_response as result_response
    from mcpdi.lowlevel._param_headers import HeaderParam as HeaderParam
    from mcpdi.lowlevel._param_headers import HeaderRules as HeaderRules
    from mcpdi.lowlevel._param_headers import MalformedHeaderValue as MalformedHeaderValue
    from mcpdi.lowlevel._param_headers import decode_header_value as decode_header_value
    from mcpdi.lowlevel._param_headers import encode_header_value as encode_header_value
    from mcpdi.lowlevel._param_headers import find_invalid_x_mcp_header as find_invalid_x_mcp_header
    from mcpdi.lowlevel._param_headers import mcp_param_headers as mcp_param_headers
    from mcpdi.lowlevel._param_headers import validate_mcp_param_headers as validate_mcp_param_headers
    from mcpdi.lowlevel._param_headers import x_mcp_header_params as x_mcp_header_params
    from mcpdi.lowlevel._runner import Runner as Runner
    from mcpdi.lowlevel._server import HandlerEntry as HandlerEntry
    from mcpdi.lowlevel._server import Server as Server
    from mcpdi.lowlevel._serving import CustomRoute as CustomRoute
    from mcpdi.lowlevel._serving import ServingOptions as ServingOptions
    from mcpdi.lowlevel._subscriptions import SUBSCRIPTION_ID_META_KEY as SUBSCRIPTION_ID_META_KEY
    from mcpdi.lowlevel._subscriptions import InMemorySubscriptionBus as InMemorySubscriptionBus
    from mcpdi.lowlevel._subscriptions import ListenHandler as ListenHandler
    from mcpdi.lowlevel._subscriptions import PromptsListChanged as PromptsListChanged
    from mcpdi.lowlevel._subscriptions import ResourcesListChanged as ResourcesListChanged
    from mcpdi.lowlevel._subscriptions import ResourceUpdated as ResourceUpdated
    from mcpdi.lowlevel._subscriptions import ServerEvent as ServerEvent
    from mcpdi.lowlevel._subscriptions import SubscriptionBus as SubscriptionBus
    from mcpdi.lowlevel._subscriptions import ToolsListChanged as ToolsListChanged
    from mcpdi.lowlevel._subscriptions import event_matches as event_matches

_HOMES: dict[str, str] = {
    "collector_paused": "mcpdi._collector",
    "AnswerInputRequest": "mcpdi.lowlevel._client_rounds",
    "InputRequired": "mcpdi.lowlevel._client_rounds",
    "RoundLimitExceeded": "mcpdi.lowlevel._client_rounds",
    "RoundRequest": "mcpdi.lowlevel._client_rounds",
    "drive_rounds": "mcpdi.lowlevel._client_rounds",
    "read_input_required": "mcpdi.lowlevel._client_rounds",
    "Connection": "mcpdi.lowlevel._connection",
    "Era": "mcpdi.lowlevel._connection",
    "Peer": "mcpdi.lowlevel._connection",
    "ServerRequestContext": "mcpdi.lowlevel._context",
    "check_modern_http_request": "mcpdi.lowlevel._envelope",
    "unsupported_version": "mcpdi.lowlevel._envelope",
    "HEADER_MISMATCH": "mcpdi.lowlevel._errors",
    "INTERNAL_ERROR": "mcpdi.lowlevel._errors",
    "INVALID_PARAMS": "mcpdi.lowlevel._errors",
    "INVALID_REQUEST": "mcpdi.lowlevel._errors",
    "METHOD_NOT_FOUND": "mcpdi.lowlevel._errors",
    "MISSING_CAPABILITY": "mcpdi.lowlevel._errors",
    "PARSE_ERROR": "mcpdi.lowlevel._errors",
    "UNSUPPORTED_VERSION": "mcpdi.lowlevel._errors",
    "MCPError": "mcpdi.lowlevel._errors",
    "NoBackChannel": "mcpdi.lowlevel._errors",
    "http_status_for": "mcpdi.lowlevel._errors",
    "validate_extension_identifier": "mcpdi.lowlevel._extension_identifier",
    "sieve_plain_tool_result": "mcpdi.lowlevel._fast_sieve",
    "current_http_scope": "mcpdi.lowlevel._http_scope",
    "serving_http_request": "mcpdi.lowlevel._http_scope",
    "Invalid": "mcpdi.lowlevel._jsonrpc",
    "Notification": "mcpdi.lowlevel._jsonrpc",
    "Request": "mcpdi.lowlevel._jsonrpc",
    "RequestId": "mcpdi.lowlevel._jsonrpc",
    "Response": "mcpdi.lowlevel._jsonrpc",
    "classify_message": "mcpdi.lowlevel._jsonrpc",
    "encode_message": "mcpdi.lowlevel._jsonrpc",
    "error_from_object": "mcpdi.lowlevel._jsonrpc",
    "error_response": "mcpdi.lowlevel._jsonrpc",
    "is_request_id": "mcpdi.lowlevel._jsonrpc",
    "notification_message": "mcpdi.lowlevel._jsonrpc",
    "parse_json": "mcpdi.lowlevel._jsonrpc",
    "request_message": "mcpdi.lowlevel._jsonrpc",
    "result_response": "mcpdi.lowlevel._jsonrpc",
    "HeaderParam": "mcpdi.lowlevel._param_headers",
    "HeaderRules": "mcpdi.lowlevel._param_headers",
    "MalformedHeaderValue": "mcpdi.lowlevel._param_headers",
    "decode_header_value": "mcpdi.lowlevel._param_headers",
    "encode_header_value": "mcpdi.lowlevel._param_headers",
    "find_invalid_x_mcp_header": "mcpdi.lowlevel._param_headers",
    "mcp_param_headers": "mcpdi.lowlevel._param_headers",
    "validate_mcp_param_headers": "mcpdi.lowlevel._param_headers",
    "x_mcp_header_params": "mcpdi.lowlevel._param_headers",
    "Runner": "mcpdi.lowlevel._runner",
    "HandlerEntry": "mcpdi.lowlevel._server",
    "Server": "mcpdi.lowlevel._server",
    "CustomRoute": "mcpdi.lowlevel._serving",
    "ServingOptions": "mcpdi.lowlevel._serving",
    "SUBSCRIPTION_ID_META_KEY": "mcpdi.lowlevel._subscriptions",
    "InMemorySubscriptionBus": "mcpdi.lowlevel._subscriptions",
    "ListenHandler": "mcpdi.lowlevel._subscriptions",
    "PromptsListChanged": "mcpdi.lowlevel._subscriptions",
    "ResourcesListChanged": "mcpdi.lowlevel._subscriptions",
    "ResourceUpdated": "mcpdi.lowlevel._subscriptions",
    "ServerEvent": "mcpdi.lowlevel._subscriptions",
    "SubscriptionBus": "mcpdi.lowlevel._subscriptions",
    "ToolsListChanged": "mcpdi.lowlevel._subscriptions",
    "event_matches": "mcpdi.lowlevel._subscriptions",
}

__all__ = (
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CAPABILITY",
    "PARSE_ERROR",
    "SUBSCRIPTION_ID_META_KEY",
    "UNSUPPORTED_VERSION",
    "AnswerInputRequest",
    "Connection",
    "CustomRoute",
    "Era",
    "HandlerEntry",
    "HeaderParam",
    "HeaderRules",
    "InMemorySubscriptionBus",
    "InputRequired",
    "Invalid",
    "ListenHandler",
    "MCPError",
    "MalformedHeaderValue",
    "NoBackChannel",
    "Notification",
    "Peer",
    "PromptsListChanged",
    "Request",
    "RequestId",
    "ResourceUpdated",
    "ResourcesListChanged",
    "Response",
    "RoundLimitExceeded",
    "RoundRequest",
    "Runner",
    "Server",
    "ServerEvent",
    "ServerRequestContext",
    "ServingOptions",
    "SubscriptionBus",
    "ToolsListChanged",
    "check_modern_http_request",
    "classify_message",
    "collector_paused",
    "current_http_scope",
    "decode_header_value",
    "drive_rounds",
    "encode_header_value",
    "encode_message",
    "error_from_object",
    "error_response",
    "event_matches",
    "find_invalid_x_mcp_header",
    "http_status_for",
    "is_request_id",
    "mcp_param_headers",
    "notification_message",
    "parse_json",
    "read_input_required",
    "request_message",
    "result_response",
    "serving_http_request",
    "sieve_plain_tool_result",
    "unsupported_version",
    "validate_extension_identifier",
    "validate_mcp_param_headers",
    "x_mcp_header_params",
)


def __getattr__(name: str) -> _typing.Any:
    return _load_name(__name__, _HOMES, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)
