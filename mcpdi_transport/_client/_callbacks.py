"""The client's callbacks: their typed shapes and how one server question is routed to them.

Every callback may be a coroutine function or a plain function; a plain one runs on a worker
thread, so it may block (a terminal prompt calling `input()`).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast

import anyio.to_thread
import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from mcpdi.lowlevel import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, MCPError

__all__ = (
    "Callbacks",
    "ClientRequestContext",
    "ElicitationCallback",
    "ListRootsCallback",
    "LoggingCallback",
    "MessageHandler",
    "ProgressCallback",
    "RequestContext",
    "SamplingCallback",
    "answer_server_request",
    "invoke",
)

logger = logging.getLogger("mcpdi_transport.client")

Era = Literal["legacy", "modern"]
_R = TypeVar("_R", covariant=True)
MaybeAwaitable = Awaitable[_R] | _R
"""A callback's return: a coroutine function's awaitable or a plain function's value."""


def _is_async(callback: object) -> bool:
    return inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(
        getattr(callback, "__call__", None)  # noqa: B004  # a callable object's async __call__
    )


@dataclass(frozen=True, slots=True)
class ClientRequestContext:
    """What a callback learns about the question it is answering (the client's side of
    `ServerRequestContext`; `RequestContext` is the same class under the official SDK's name).

    `request_id` is the server's JSON-RPC id in the handshake era and the `inputRequests`
    key in the 2026-07-28 era; `meta` is the question's own `_meta`, if it carried one.
    """

    request_id: str | int
    era: Era
    protocol_version: str
    meta: Mapping[str, Any] | None = None


RequestContext = ClientRequestContext
"""The official SDK's name for `ClientRequestContext`, so a callback written for it ports unchanged."""


class ElicitationCallback(Protocol):
    """Answers `elicitation/create`: ask the person, return their answer (or an `ErrorData`)."""

    def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams, /
    ) -> MaybeAwaitable[types.ElicitResult | types.ErrorData]: ...


class SamplingCallback(Protocol):
    """Answers `sampling/createMessage` with the client's LLM (or an `ErrorData`)."""

    def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams, /
    ) -> MaybeAwaitable[types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData]: ...


class ListRootsCallback(Protocol):
    """Answers `roots/list` with the client's roots (or an `ErrorData`)."""

    def __call__(
        self, context: ClientRequestContext, /
    ) -> MaybeAwaitable[types.ListRootsResult | types.ErrorData]: ...


class LoggingCallback(Protocol):
    """Receives every `notifications/message` the server sends."""

    def __call__(self, params: types.LoggingMessageNotificationParams, /) -> MaybeAwaitable[None]: ...


class ProgressCallback(Protocol):
    """Receives the progress a server reports for one request (`call_tool(..., progress_callback=)`)."""

    def __call__(
        self, progress: float, total: float | None, message: str | None, /
    ) -> MaybeAwaitable[None]: ...


class MessageHandler(Protocol):
    """Receives every notification the server sends (progress, log messages, list changes)."""

    def __call__(self, notification: types.ServerNotification, /) -> MaybeAwaitable[None]: ...


_T = TypeVar("_T")


async def invoke(callback: Callable[..., MaybeAwaitable[_T]], *args: Any) -> _T:
    """Call a callback: a coroutine function is awaited; a plain function runs on a worker
    thread (so it may block, e.g. on `input()`), and an awaitable it returns is awaited."""
    if _is_async(callback):
        return await cast("Awaitable[_T]", callback(*args))
    result = await anyio.to_thread.run_sync(functools.partial(callback, *args))
    if inspect.isawaitable(result):
        return await cast("Awaitable[_T]", result)
    return result


_elicit_params: TypeAdapter[types.ElicitRequestParams] = TypeAdapter(types.ElicitRequestParams)
_sampling_params = TypeAdapter(types.CreateMessageRequestParams)
_AnswerModel = types.ElicitResult | types.CreateMessageResult | types.CreateMessageResultWithTools
_Answer = _AnswerModel | types.ListRootsResult | types.ErrorData


@dataclass(frozen=True, slots=True)
class Callbacks:
    """The callbacks a `Client` was given; the capabilities it declares follow from them."""

    elicitation: ElicitationCallback | None = None
    sampling: SamplingCallback | None = None
    list_roots: ListRootsCallback | None = None
    logging: LoggingCallback | None = None
    message_handler: MessageHandler | None = None
    sampling_capabilities: types.SamplingCapability | None = None

    def capabilities(self) -> dict[str, Any]:
        """The `ClientCapabilities` object, as wire JSON, that these callbacks can honour."""
        capabilities: dict[str, Any] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {"form": {}}
        if self.sampling is not None:
            declared = self.sampling_capabilities or types.SamplingCapability()
            # `tools` lets a server send `tools` in its question (`Sample(tools=...)`)
            capabilities["sampling"] = declared.model_dump(by_alias=True, mode="json", exclude_none=True)
        if self.list_roots is not None:
            capabilities["roots"] = {}
        return capabilities

    async def deliver(self, method: str, params: Mapping[str, Any] | None) -> None:
        """Hand one server notification to `message_handler` and, for log messages, `logging`."""
        if self.message_handler is None and self.logging is None:
            return
        body: dict[str, Any] = {"method": method}
        if params is not None:
            body["params"] = dict(params)
        try:
            notification = types.server_notification_adapter.validate_python(
                body, by_alias=True, by_name=False
            )
        except ValidationError:
            logger.debug("dropping a notification this client does not understand: %s", method)
            return
        if self.logging is not None and isinstance(notification, types.LoggingMessageNotification):
            await invoke(self.logging, notification.params)
        if self.message_handler is not None:
            await invoke(self.message_handler, notification)


async def answer_server_request(
    callbacks: Callbacks, context: ClientRequestContext, method: str, params: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Answer one server question (a legacy request or a modern `inputRequests` entry).

    Returns the wire JSON of the callback's result. Raises `MCPError` when there is no
    callback for `method`, when the question is malformed, or when the callback answered
    with an `ErrorData`.
    """
    answer: _Answer
    if method == "ping":
        return {}
    if method == "elicitation/create" and callbacks.elicitation is not None:
        answer = await invoke(callbacks.elicitation, context, _parse(_elicit_params, method, params))
    elif method == "sampling/createMessage" and callbacks.sampling is not None:
        answer = await invoke(callbacks.sampling, context, _parse(_sampling_params, method, params))
    elif method == "roots/list" and callbacks.list_roots is not None:
        answer = await invoke(callbacks.list_roots, context)
    else:
        msg = f"This client cannot answer {method!r}: it was not given a callback for it"
        raise MCPError(METHOD_NOT_FOUND, msg, method)
    if isinstance(answer, types.ErrorData):
        raise MCPError(answer.code, answer.message, answer.data)
    if not isinstance(answer, _AnswerModel | types.ListRootsResult):  # pyright: ignore[reportUnnecessaryIsInstance]
        kind = type(answer).__name__
        msg = f"The {method!r} callback returned {kind}; it must return a result model or ErrorData"
        raise MCPError(INTERNAL_ERROR, msg)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


def _parse(adapter: TypeAdapter[_T], method: str, params: Mapping[str, Any] | None) -> _T:
    try:
        return adapter.validate_python(dict(params or {}), by_alias=True, by_name=False)
    except ValidationError as exc:
        msg = f"The server sent malformed {method!r} params: {exc.errors(include_url=False)}"
        raise MCPError(INVALID_PARAMS, msg) from None
