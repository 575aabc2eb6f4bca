"""mcpdi.lowlevel: the public sans-IO protocol layer.

This is the one door between the MCP layer and any transport. A transport reads bytes,
classifies each message (`classify_message`), hands requests to a `Runner` bound to a
`Connection`, and writes the response objects it returns; the core never touches a socket.
`mcpdi_transport` is built on these names alone, and so can any other transport.

A client's side of a 2026-07-28 multi-round request is here too (`drive_rounds`): every client
of mcpdi, over a transport or in memory, answers `inputRequests` with this one loop.
"""

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
