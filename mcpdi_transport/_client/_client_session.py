"""One connected client session: picks the era, stamps every request for it, answers the server."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any, Final, Literal, TypeVar

import anyio
import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpdi.lowlevel import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_CAPABILITY,
    SUBSCRIPTION_ID_META_KEY,
    UNSUPPORTED_VERSION,
    MCPError,
    encode_header_value,
)
from mcpdi_transport._client._bound_notifications import BoundNotifications
from mcpdi_transport._client._callbacks import (
    Callbacks,
    ClientRequestContext,
    ProgressCallback,
    answer_server_request,
    invoke,
)
from mcpdi_transport._client._channel import (
    Channel,
    ConnectionLost,
    SessionExpired,
    as_object,
    raise_for_error,
)
from mcpdi_transport._client._extensions import NO_EXTENSIONS, FoldedExtensions

__all__ = ("REQUEST_TIMEOUT", "ClientSession", "Mode", "within_timeout")

logger = logging.getLogger("mcpdi_transport.client")

Mode = Literal["auto", "legacy"] | str
"""`"auto"`, `"legacy"`, or a modern protocol version such as `"2026-07-28"`."""

REQUEST_TIMEOUT: Final = -32001
_CANCEL_NOTICE_TIMEOUT = 2.0
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


_T = TypeVar("_T")


async def within_timeout(sending: Awaitable[_T], seconds: float | None, method: str) -> _T:
    """`sending`, abandoned (cancelled, so the server is told) after `seconds`: `MCPError(-32001)`."""
    if seconds is None:
        return await sending
    try:
        with anyio.fail_after(seconds):
            return await sending
    except TimeoutError:
        msg = f"Request {method!r} timed out"
        raise MCPError(REQUEST_TIMEOUT, msg) from None


class ClientSession:
    """The negotiated state of one connection and the request stamping each era needs."""

    def __init__(
        self,
        callbacks: Callbacks,
        client_info: types.Implementation,
        log_level: str | None,
        extensions: FoldedExtensions = NO_EXTENSIONS,
    ) -> None:
        self.callbacks = callbacks
        self.extensions = extensions
        self.bound_notifications = BoundNotifications(extensions.bindings)
        self.client_info = client_info.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.log_level = log_level
        self.channel: Channel | None = None
        self.era: Literal["unset", "legacy", "modern"] = "unset"
        self.protocol_version: str | None = None
        self.server_info: types.Implementation | None = None
        self.server_capabilities: types.ServerCapabilities | None = None
        self.instructions: str | None = None
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._progress: dict[str, ProgressCallback] = {}
        self.listen_routes: dict[str | int, Callable[[str, Mapping[str, Any] | None], None]] = {}
        """Where the frames of each open listen stream go, by its subscription id."""
        self.read_timeout: float | None = None

    # -- Inbound: what the channel hands over -------------------------------------------

    async def on_request(
        self, request_id: str | int, method: str, params: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        meta = params.get("_meta") if params is not None else None
        context = ClientRequestContext(
            request_id=request_id,
            era="legacy",
            protocol_version=self.protocol_version or LATEST_HANDSHAKE_VERSION,
            meta=as_object(meta),
        )
        try:
            return await answer_server_request(self.callbacks, context, method, params)
        except MCPError:
            raise
        except Exception as exc:  # a failing callback must not leave the server waiting forever
            logger.exception("the client's callback for %r raised", method)
            msg = f"The client failed to answer {method!r}"
            raise MCPError(INTERNAL_ERROR, msg) from exc

    async def on_notification(self, method: str, params: Mapping[str, Any] | None) -> None:
        try:
            await self._deliver(method, params)
        except Exception:  # one failing handler must not stop the connection's reader
            logger.exception("the client's handler for the %r notification raised", method)

    async def _deliver(self, method: str, params: Mapping[str, Any] | None) -> None:
        meta = as_object(params.get("_meta")) if params is not None else None
        subscription = meta.get(SUBSCRIPTION_ID_META_KEY) if meta is not None else None
        route = self.listen_routes.get(subscription) if isinstance(subscription, str | int) else None
        if route is not None:
            route(method, params)  # a frame of one of this client's listen streams
            return
        if self.bound_notifications.offer(method, params, self.protocol_version):
            return
        if method == "notifications/progress" and params is not None:
            callback = self._progress.get(params.get("progressToken"))  # pyright: ignore[reportArgumentType]
            progress = params.get("progress")
            if callback is not None and isinstance(progress, int | float):
                total = params.get("total")
                message = params.get("message")
                await invoke(
                    callback,
                    progress,
                    total if isinstance(total, int | float) else None,
                    message if isinstance(message, str) else None,
                )
        await self.callbacks.deliver(method, params)

    def capabilities(self, version: str | None) -> dict[str, Any]:
        """The `ClientCapabilities` wire JSON for a request at `version` (None: `initialize`)."""
        capabilities = self.callbacks.capabilities()
        advertised = self.extensions.advertised(version)
        if advertised:
            capabilities["extensions"] = advertised
        return capabilities

    @contextmanager
    def progress_token(self, callback: ProgressCallback | None) -> Generator[dict[str, Any]]:
        """The `_meta` that asks for progress reports (empty without a callback), routed while open."""
        if callback is None:
            yield {}
            return
        token = f"progress-{next(self._tokens)}"
        self._progress[token] = callback
        try:
            yield {"progressToken": token}
        finally:
            del self._progress[token]

    async def answer_input_request(
        self, key: str, method: str, params: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """Answer one `inputRequests` entry of a modern `InputRequiredResult`."""
        meta = params.get("_meta") if params is not None else None
        context = ClientRequestContext(
            request_id=key,
            era="modern",
            protocol_version=self.protocol_version or MODERN_PROTOCOL_VERSIONS[-1],
            meta=as_object(meta),
        )
        return await answer_server_request(self.callbacks, context, method, params)

    # -- sending --------------------------------------------------------------------------

    @property
    def _channel(self) -> Channel:
        if self.channel is None:
            msg = "The client is not connected; use it as `async with Client(...) as client:`"
            raise RuntimeError(msg)
        return self.channel

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        renew_session: bool = True,
        request_id: str | int | None = None,
    ) -> dict[str, Any]:
        """Send one request stamped for the negotiated era; return its `result` or raise `MCPError`.

        When a handshake-era HTTP server says the session is gone (404), the client
        initializes a new session and sends the request once more, as the spec requires.
        Past `read_timeout` seconds the request is abandoned with `-32001`, as the SDK's is;
        with a `request_id` of its own (a listen stream's) it has no timeout.
        """
        sending = self._send(method, params, headers, renew_session, request_id)
        if request_id is not None:
            return await sending
        return await within_timeout(sending, self.read_timeout, method)

    async def _send(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        renew: bool,
        request_id: str | int | None = None,
    ) -> dict[str, Any]:
        if self.era == "modern":
            assert self.protocol_version is not None
            message, stamped = self._modern_message(method, params, self.protocol_version)
            if request_id is not None:
                message["id"] = request_id
        else:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
            if params is not None:
                message["params"] = dict(params)
            stamped = {}
            if self.protocol_version is not None:
                stamped["MCP-Protocol-Version"] = self.protocol_version
        stamped.update(headers or {})
        try:
            return raise_for_error(await self._channel.request(message, stamped))
        except anyio.get_cancelled_exc_class():
            await self._cancel(message, stamped)
            raise
        except SessionExpired:
            if method == "initialize" or not renew:
                raise
        # spec-2025 transports: a 404 for the session means a fresh initialize, then the request again
        logger.info("the server ended the session; initializing a new one")
        await self._initialize()
        return await self._send(method, params, headers, False)

    async def _cancel(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """Tell the server an abandoned request is cancelled, where the wire needs words for it.

        Over modern HTTP closing the response stream already is the cancellation; `initialize`
        is never cancelled.
        """
        channel = self.channel
        if channel is None or message["method"] == "initialize" or (self.era == "modern" and channel.is_http):
            return
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": message["id"], "reason": "The client abandoned the request"},
        }
        version = (
            {"MCP-Protocol-Version": headers["MCP-Protocol-Version"]}
            if "MCP-Protocol-Version" in headers
            else {}
        )
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_NOTICE_TIMEOUT):
            try:
                await channel.notify(notice, version)
            except (ConnectionLost, MCPError):
                logger.debug("could not tell the server that request %r is cancelled", message["id"])

    def _modern_message(
        self, method: str, params: Mapping[str, Any] | None, version: str
    ) -> tuple[dict[str, Any], dict[str, str]]:
        body = dict(params or {})
        meta = dict(body.get("_meta") or {})
        meta[types.PROTOCOL_VERSION_META_KEY] = version
        meta[types.CLIENT_INFO_META_KEY] = self.client_info
        meta[types.CLIENT_CAPABILITIES_META_KEY] = self.capabilities(version)
        if self.log_level is not None:
            meta.setdefault(types.LOG_LEVEL_META_KEY, self.log_level)
        body["_meta"] = meta
        headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
        name_param = _NAME_PARAM.get(method)
        if name_param is not None and isinstance(name := body.get(name_param), str):
            headers["Mcp-Name"] = encode_header_value(name)
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": body}, headers

    # -- picking the era ------------------------------------------------------------------

    async def connect(self, channel: Channel, mode: Mode, discover_timeout: float) -> None:
        """Negotiate: `initialize` (legacy), `server/discover` (a pinned version), or probe (auto)."""
        self.channel = channel
        if mode == "legacy":
            await self._initialize()
        elif mode == "auto":
            await self._probe(discover_timeout)
        else:
            self._adopt(await self._discover(mode, discover_timeout), mode)

    async def _probe(self, discover_timeout: float) -> None:
        """protocol.md §1.5: only a `DiscoverResult` or a -32022 naming a mutual version is modern.

        An `initialize` answered with -32022 naming a modern version is modern evidence too
        (a probe that timed out here may still have locked a slow server's stdio to the
        modern era), so it earns one more probe.
        """
        version = MODERN_PROTOCOL_VERSIONS[-1]
        for attempt in range(2):
            verdict = await self._ask_discover(version, discover_timeout)
            if isinstance(verdict, types.DiscoverResult):
                supported = verdict.supported_versions
                self._adopt(verdict, [v for v in MODERN_PROTOCOL_VERSIONS if v in supported][-1])
                return
            if verdict is not None and attempt == 0:
                version = verdict
                continue
            try:
                await self._initialize()
            except MCPError as exc:
                mutual = _mutual_modern(exc) if exc.code == UNSUPPORTED_VERSION else []
                if not mutual or attempt == 1:
                    raise
                version = mutual[-1]
                continue
            return

    async def _ask_discover(self, version: str, timeout: float) -> types.DiscoverResult | str | None:
        """A modern `DiscoverResult`, a version to probe again with, or None for the handshake."""
        try:
            result = await self._discover(version, timeout)
        except TimeoutError:
            logger.debug("server/discover went unanswered; using the initialize handshake")
            return None
        except MCPError as exc:
            if exc.code in (HEADER_MISMATCH, MISSING_CAPABILITY):
                raise
            if exc.code != UNSUPPORTED_VERSION:
                return None
            mutual = _mutual_modern(exc)
            if mutual and mutual[-1] != version:
                return mutual[-1]
            supported = _supported_versions(exc.data)
            if supported and not mutual and not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                msg = (
                    f"The server speaks only protocol versions {supported}, none of which this "
                    f"client knows ({[*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS]})"
                )
                raise MCPError(UNSUPPORTED_VERSION, msg, exc.data) from exc
            return None
        if any(v in result.supported_versions for v in MODERN_PROTOCOL_VERSIONS):
            return result
        return None

    async def _discover(self, version: str, timeout: float) -> types.DiscoverResult:
        message, headers = self._modern_message("server/discover", None, version)
        with anyio.fail_after(timeout):
            raw = raise_for_error(await self._channel.request(message, headers))
        try:
            return types.DiscoverResult.model_validate(raw, by_alias=True, by_name=False)
        except ValidationError as exc:
            msg = f"The server's server/discover result is malformed: {exc.errors(include_url=False)}"
            raise MCPError(INVALID_PARAMS, msg) from None

    def _adopt(self, result: types.DiscoverResult, version: str) -> None:
        self.era = "modern"
        self.protocol_version = version
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        stamp = (result.meta or {}).get(types.SERVER_INFO_META_KEY)
        try:
            self.server_info = None if stamp is None else types.Implementation.model_validate(stamp)
        except ValidationError:
            self.server_info = None  # display-only; a bad stamp does not fail the connection

    async def _initialize(self) -> None:
        params = {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": self.capabilities(None),
            "clientInfo": self.client_info,
        }
        self.era = "legacy"
        self.protocol_version = None
        raw = await self.send("initialize", params)
        try:
            result = types.InitializeResult.model_validate(raw, by_alias=True, by_name=False)
        except ValidationError as exc:
            msg = f"The server's initialize result is malformed: {exc.errors(include_url=False)}"
            raise MCPError(INVALID_PARAMS, msg) from None
        if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            msg = (
                f"The server answered initialize with protocol version {result.protocol_version!r}, "
                f"which this client does not speak (it speaks {list(HANDSHAKE_PROTOCOL_VERSIONS)})"
            )
            raise MCPError(UNSUPPORTED_VERSION, msg)
        self.protocol_version = result.protocol_version
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        self.instructions = result.instructions
        await self._channel.notify(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"MCP-Protocol-Version": result.protocol_version},
        )
        if self.log_level is not None and result.capabilities.logging is not None:
            await self.send("logging/setLevel", {"level": self.log_level})


def _mutual_modern(error: MCPError) -> list[str]:
    supported = _supported_versions(error.data)
    return [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]


def _supported_versions(data: Any) -> list[str]:
    try:
        return types.UnsupportedProtocolVersionErrorData.model_validate(data).supported
    except ValidationError:
        return []
