"""`Runner`: one parsed JSON-RPC message in, the response out, in either protocol era (sans-IO)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, cast

import anyio
import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, TypeAdapter, ValidationError

from mcpdi.lowlevel._context import LifespanT, ServerRequestContext
from mcpdi.lowlevel._envelope import (
    Envelope,
    describe_validation_error,
    has_modern_envelope,
    read_envelope,
    stamp_modern_result,
)
from mcpdi.lowlevel._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_VERSION,
    MCPError,
)
from mcpdi.lowlevel._fast_params import tool_call_params_pass
from mcpdi.lowlevel._fast_sieve import sieve_plain_tool_result, sieve_stamped_tool_result
from mcpdi.lowlevel._http_checks import PendingParamCheck, http_request_problem
from mcpdi.lowlevel._jsonrpc import (
    Invalid,
    Notification,
    Request,
    RequestId,
    Response,
    classify_message,
    error_response,
    is_request_id,
    result_response,
)
from mcpdi.lowlevel._tool_schema import find_tool_input_schema
from mcpdi.lowlevel._wire_methods import methods, serialize_initialize_result

if TYPE_CHECKING:
    from mcpdi.lowlevel._connection import Connection, Peer
    from mcpdi.lowlevel._param_headers import HeaderRules
    from mcpdi.lowlevel._server import HandlerEntry, Server

__all__ = ("Runner",)

logger = logging.getLogger("mcpdi")

_PRE_INITIALIZE_METHODS = frozenset({"ping"})


def _method_not_found(method: str) -> MCPError:
    return MCPError(METHOD_NOT_FOUND, "Method not found", method)


def _claimed_shape(version: str, result: Mapping[str, Any]) -> bool:
    kind = result.get("resultType")
    return (
        version in MODERN_PROTOCOL_VERSIONS and isinstance(kind, str) and kind not in types.CORE_RESULT_TYPES
    )


def _invalid_params(method: str, error: ValidationError, *, skip: int = 0) -> MCPError:
    detail = describe_validation_error(error, skip=skip)
    return MCPError(INVALID_PARAMS, f"Invalid params for {method!r}: {detail}")


@functools.cache
def _wire_params_adapter(method: str, version: str) -> TypeAdapter[Any] | None:
    """The type of `params` in `(method, version)`'s wire request, when validating `params` alone
    is the same check as `methods.validate_client_request` (which validates a whole stub request)."""
    request_type = methods().CLIENT_REQUESTS[(method, version)]
    field = request_type.model_fields.get("params")
    decorators = request_type.__pydantic_decorators__
    if field is None or field.annotation is None or field.metadata:
        return None
    if decorators.model_validators or decorators.field_validators:
        return None
    return TypeAdapter[Any](field.annotation)


def _params_pass(
    method: str, version: str, params: Mapping[str, Any] | None, envelope: Envelope | None
) -> bool:
    """Whether `params` are valid for `(method, version)` by the quick check; False: ask the full one.

    `envelope` is the one read from these params (modern era), which the quick check may key on.
    """
    if params is None:
        return False
    if method == "tools/call" and tool_call_params_pass(version, params, envelope):
        return True
    adapter = _wire_params_adapter(method, version)
    if adapter is None:
        return False
    try:
        adapter.validator.validate_python(params, by_name=False)  # what `adapter.validate_python` calls
    except ValidationError:
        return False
    return True


def _dump(result: object) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, BaseModel):
        # A malformed model is caught by the per-version validation that follows; no warning spam.
        return result.model_dump(by_alias=True, mode="json", exclude_none=True, warnings=False)
    if isinstance(result, Mapping):
        return dict(cast("Mapping[str, Any]", result))
    msg = f"handler returned {type(result).__name__}; return an mcp_types result model, a dict or None"
    raise TypeError(msg)


class Runner(Generic[LifespanT]):
    """Answers JSON-RPC messages for a `Server` whose lifespan is entered (`Server.running()`).

    Transports call `handle` once per inbound message, each request in its own task, and
    route the client's responses to their own pending server-to-client requests. `handle`
    never raises for a peer's mistake: it answers with a JSON-RPC error instead.
    """

    def __init__(self, server: Server[LifespanT], lifespan_context: LifespanT) -> None:
        self.server = server
        self.lifespan_context = lifespan_context
        # (method, version) -> the last listed items and their sieved form, while a handler keeps
        # answering with the very same list (MCPServer's tools/list does until its tools change)
        self._sieved_items: dict[tuple[str, str], tuple[list[Any], list[Any]]] = {}

    async def handle(
        self, message: Mapping[str, Any] | Request, connection: Connection, peer: Peer
    ) -> dict[str, Any] | None:
        """Answer one parsed JSON-RPC message, or a `Request` the transport already classified.

        Returns the response object for a request (or an invalid message), and None for a
        notification, a client response, and a request cancelled by
        `notifications/cancelled` (a cancelled request is not answered).
        """
        kind = message if isinstance(message, Request) else classify_message(message)
        if isinstance(kind, Request):
            if connection.transport_cancels:  # `_answer` without its cancel scope, inline
                try:
                    return result_response(kind.id, await self._dispatch(kind, connection, peer))
                except MCPError as error:
                    return error_response(kind.id, error)
            return await self._answer(kind, connection, peer)
        if isinstance(kind, Notification):
            await self._take_notification(kind, connection, peer)
            return None
        if isinstance(kind, Invalid):
            return error_response(kind.id, kind.error)
        assert isinstance(kind, Response)
        return None

    def cancel(self, connection: Connection, request_id: RequestId) -> bool:
        """Cancel the in-flight handler of `request_id` on `connection`; False if none runs."""
        scope = connection.in_flight.get(request_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def tool_input_schema(
        self, name: str, *, meta: Mapping[str, Any] | None = None, peer: Peer | None = None
    ) -> Mapping[str, Any] | None:
        """The `inputSchema` of tool `name`, for `Mcp-Param-*` validation; None: skip validation.

        Asks `get_tool_input_schema` when set, else runs the `tools/list` handler (paging)
        with the caller's envelope `meta`. Any failure or an unknown tool gives None.
        """
        return await find_tool_input_schema(self, name, meta=meta, peer=peer)

    async def tool_header_rules(
        self, name: str, *, meta: Mapping[str, Any] | None = None, peer: Peer | None = None
    ) -> HeaderRules | None:
        """What `validate_mcp_param_headers` needs for tool `name`; None: skip validation.

        The server's precomputed header parameters when it has them (`MCPServer`), else the
        tool's `inputSchema` (`tool_input_schema`).
        """
        getter = self.server.get_tool_header_params
        if getter is not None:
            return getter(name)
        return await find_tool_input_schema(self, name, meta=meta, peer=peer)

    # -- notifications -------------------------------------------------------------

    async def _take_notification(self, note: Notification, connection: Connection, peer: Peer) -> None:
        if note.method == "notifications/cancelled":
            request_id = (note.params or {}).get("requestId")
            if is_request_id(request_id):
                self.cancel(connection, request_id)
        elif note.method == "notifications/initialized":
            if connection.era != "modern":
                connection.initialized = True
        elif (entry := self.server.notification_handler_for(note.method)) is not None:
            await self._deliver(note, entry, connection, peer)
        else:
            logger.debug("ignored notification %r", note.method)

    async def _deliver(
        self, note: Notification, entry: HandlerEntry, connection: Connection, peer: Peer
    ) -> None:
        """Hand a client notification to its handler; nothing goes back, so failures are only logged."""
        try:
            params = entry.params_type.model_validate(note.params or {}, by_name=False)
        except ValidationError as error:
            logger.warning(
                "dropped %r with invalid params: %s", note.method, describe_validation_error(error)
            )
            return
        meta = (note.params or {}).get("_meta")
        context = ServerRequestContext.for_request(
            self.lifespan_context,
            connection,
            peer,
            note.method,
            meta=cast("Mapping[str, Any] | None", meta if isinstance(meta, Mapping) else None),
        )
        try:
            await entry.handler(context, params)
        except Exception:
            logger.exception("handler for notification %r raised", note.method)

    # -- requests --------------------------------------------------------------------

    async def _answer(self, request: Request, connection: Connection, peer: Peer) -> dict[str, Any] | None:
        """A request of a connection whose transport does not cancel: cancellable here by its id."""
        result: dict[str, Any] = {}
        try:
            with anyio.CancelScope() as scope:
                if request.method != "initialize":  # initialize must not be cancelled
                    connection.in_flight[request.id] = scope
                try:
                    result = await self._dispatch(request, connection, peer)
                finally:
                    if connection.in_flight.get(request.id) is scope:
                        del connection.in_flight[request.id]
            if scope.cancelled_caught:
                return None
            return result_response(request.id, result)
        except MCPError as error:
            return error_response(request.id, error)

    def _choose_era(self, request: Request, connection: Connection) -> Literal["legacy", "modern"]:
        era = connection.era
        if era == "modern":
            return self._stay_modern(request, connection)
        if era == "legacy" and not connection.locks_era:
            return "legacy"  # whatever the request claims (an HTTP session's connection)
        claims_modern = request.method != "initialize" and has_modern_envelope(request.params)
        if era == "unset":
            if claims_modern:
                return "modern"  # locked once the envelope proves valid
            connection.era = "legacy"
            return "legacy"
        if era == "legacy":
            if claims_modern:
                msg = (
                    "this connection serves the handshake protocol era; "
                    "requests carrying the 2026-07-28 envelope are not accepted on it"
                )
                raise MCPError(INVALID_REQUEST, msg)
            return "legacy"
        return self._stay_modern(request, connection)

    def _stay_modern(self, request: Request, connection: Connection) -> Literal["modern"]:
        """A connection serving the 2026-07-28 era refuses the handshake when its era is locked."""
        if request.method == "initialize" and connection.locks_era:
            requested = (request.params or {}).get("protocolVersion")
            data: dict[str, Any] = {"supported": list(MODERN_PROTOCOL_VERSIONS)}
            if isinstance(requested, str):
                data["requested"] = requested
            msg = "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"
            raise MCPError(UNSUPPORTED_VERSION, msg, data)
        return "modern"

    async def _dispatch(self, request: Request, connection: Connection, peer: Peer) -> dict[str, Any]:
        if connection.http_headers is not None:
            problem = http_request_problem(self, request, connection.http_headers)
            if isinstance(problem, PendingParamCheck):
                problem = await problem.problem(self, peer)
            if problem is not None:
                raise problem
        if self._choose_era(request, connection) == "modern":
            envelope = read_envelope(request.params)
            if isinstance(envelope, MCPError):
                raise envelope
            if connection.era == "unset":
                connection.era = "modern"
            return await self._modern(request, envelope, connection, peer)
        if request.method == "initialize":
            return self._initialize(request, connection)
        return await self._legacy(request, connection, peer)

    def _entry(self, method: str, version: str) -> HandlerEntry:
        if method in methods().SPEC_CLIENT_METHODS and (method, version) not in methods().CLIENT_REQUESTS:
            raise _method_not_found(method)
        entry = self.server.handler_for(method)
        if entry is None:
            raise _method_not_found(method)
        return entry

    def _parse_params(
        self,
        method: str,
        version: str,
        params: Mapping[str, Any] | None,
        params_type: type[BaseModel],
        envelope: Envelope | None = None,
    ) -> Any:
        try:
            if method in methods().SPEC_CLIENT_METHODS and not _params_pass(
                method, version, params, envelope
            ):
                methods().validate_client_request(method, version, params)  # for its error message
        except ValidationError as error:
            raise _invalid_params(method, error, skip=1) from None
        try:
            # The model's validator itself: `model_validate` only forwards to it, at a cost per request.
            validator = params_type.__pydantic_validator__
            return validator.validate_python({} if params is None else params, by_name=False)
        except ValidationError as error:
            raise _invalid_params(method, error) from None

    async def _modern(
        self, request: Request, envelope: Envelope, connection: Connection, peer: Peer
    ) -> dict[str, Any]:
        method, version = request.method, envelope.protocol_version
        assert request.params is not None  # `read_envelope` read the envelope from them
        meta: Mapping[str, Any] = request.params["_meta"]
        context = ServerRequestContext.for_request(
            self.lifespan_context,
            connection,
            peer,
            method,
            request_id=request.id,
            meta=meta,
            envelope=envelope,
        )
        if method == "server/discover":
            self._parse_params(method, version, request.params, types.RequestParams)
            result: object = types.DiscoverResult(
                supported_versions=list(MODERN_PROTOCOL_VERSIONS),
                capabilities=self.server.capabilities("modern"),
                instructions=self.server.instructions,
            )
        else:
            entry = self._entry(method, version)
            params = self._parse_params(method, version, request.params, entry.params_type, envelope)
            result = await self._call(entry, context, params)
        try:
            dumped = _dump(result)
        except TypeError:
            logger.exception("handler for %r returned an unsupported value", method)
            raise MCPError(INTERNAL_ERROR, "Handler returned an invalid result") from None
        server_info = self.server.server_info_wire
        if method == "tools/call":
            plain = sieve_stamped_tool_result(version, dumped, server_info)
            if plain is not None:
                return plain  # what stamping and sieving give, with the server's stamp sieved once
        params_dict = request.params or {}
        retry = "inputResponses" in params_dict or "requestState" in params_dict
        wire = stamp_modern_result(
            dumped,
            server_info=server_info,
            cacheable=method in methods().CACHEABLE_METHODS,
            cache=not retry,
        )
        return self._sieve(method, version, wire)

    def _initialize(self, request: Request, connection: Connection) -> dict[str, Any]:
        try:
            params = types.InitializeRequestParams.model_validate(request.params or {}, by_name=False)
        except ValidationError as error:
            raise _invalid_params("initialize", error) from None
        requested = params.protocol_version
        version = requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        connection.protocol_version = version
        connection.client_capabilities = params.capabilities
        connection.client_info = params.client_info
        # The gate opens once initialize is answered (clients may pipeline the next request).
        connection.initialized = True
        result = types.InitializeResult(
            protocol_version=version,
            capabilities=self.server.capabilities("legacy"),
            server_info=self.server.server_info,
            instructions=self.server.instructions,
        )
        return self._sieve("initialize", version, _dump(result))

    async def _legacy(self, request: Request, connection: Connection, peer: Peer) -> dict[str, Any]:
        method = request.method
        version = connection.protocol_version or LATEST_HANDSHAKE_VERSION
        if method == "logging/setLevel":
            if (method, version) not in methods().CLIENT_REQUESTS:
                raise _method_not_found(method)
            entry = None
        else:
            entry = self._entry(method, version)
        if not connection.initialized and method not in _PRE_INITIALIZE_METHODS:
            msg = f"Received {method!r} before initialization; send 'initialize' first"
            raise MCPError(INVALID_PARAMS, msg)
        params_type = types.SetLevelRequestParams if entry is None else entry.params_type
        params = self._parse_params(method, version, request.params, params_type)
        meta = (request.params or {}).get("_meta")
        context = ServerRequestContext.for_request(
            self.lifespan_context,
            connection,
            peer,
            method,
            request_id=request.id,
            meta=cast("Mapping[str, Any] | None", meta if isinstance(meta, Mapping) else None),
        )
        if entry is None:
            result = await self._set_level(context, cast("types.SetLevelRequestParams", params))
        else:
            result = await self._call(entry, context, params)
        try:
            dumped = _dump(result)
        except TypeError:
            logger.exception("handler for %r returned an unsupported value", method)
            raise MCPError(INTERNAL_ERROR, "Handler returned an invalid result") from None
        return self._sieve(method, version, dumped)

    async def _set_level(
        self, context: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> object:
        context.connection.log_level = params.level
        handler = self.server.on_set_logging_level
        if handler is None:
            return types.EmptyResult()
        return await self._call_handler(handler, context, params, "logging/setLevel")

    def _call(
        self, entry: HandlerEntry, context: ServerRequestContext[Any], params: Any
    ) -> Coroutine[Any, Any, object]:
        handler = entry.handler if entry.wire_handler is None else entry.wire_handler  # dumped next anyway
        return self._call_handler(handler, context, params, context.method)  # awaited by the caller

    async def _call_handler(
        self, handler: Any, context: ServerRequestContext[Any], params: Any, method: str
    ) -> object:
        try:
            return await handler(context, params)
        except MCPError:
            raise
        except ValidationError as error:
            logger.info("handler for %r rejected its input: %s", method, error)
            raise _invalid_params(method, error) from None
        except Exception as error:
            logger.exception("handler for %r raised", method)
            failures = context.connection.handler_failures
            if failures is None or context.request_id is None:
                raise MCPError(INTERNAL_ERROR, "Internal server error") from None
            failures[context.request_id] = error
            raise MCPError(INTERNAL_ERROR, str(error)) from None

    def _sieve(self, method: str, version: str, result: dict[str, Any]) -> dict[str, Any]:
        """Validate a spec method's result against `version`'s schema and keep only its fields.

        A 2026-07-28 result whose `resultType` is outside the core vocabulary is a shape an
        extension claims (`ResultClaim` on the client): the schema does not describe it, so it
        passes as the extension built it, as the official SDK passes it.
        """
        if method != "initialize" and method not in methods().SPEC_CLIENT_METHODS:
            return result
        if _claimed_shape(version, result):
            return result
        if method == "tools/call" and (plain := sieve_plain_tool_result(version, result)) is not None:
            return plain
        try:
            if method == "initialize":  # the handshake era's models alone: the others wait
                return serialize_initialize_result(version, result)
            items = result.get("tools") if method == "tools/list" else None
            if not isinstance(items, list):
                return methods().serialize_server_result(method, version, result)
            # Each item is sieved on its own: the same list is sieved once, the rest every time.
            kept = self._sieved_items.get((method, version))
            if kept is None or kept[0] is not items:
                sieved = methods().serialize_server_result(method, version, result)
                kept = self._sieved_items[(method, version)] = (cast("list[Any]", items), sieved["tools"])
            else:
                sieved = methods().serialize_server_result(method, version, {**result, "tools": []})
            sieved["tools"] = list(kept[1])  # a list of its own: the caller may change it
            return sieved
        except ValidationError:
            logger.exception("handler for %r returned a result that is invalid at %s", method, version)
            raise MCPError(INTERNAL_ERROR, "Handler returned an invalid result") from None
