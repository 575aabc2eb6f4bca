"""The client's Streamable HTTP channel (httpx2): POST each message, read JSON or an SSE stream."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx2

from mcpdi.lowlevel import INVALID_REQUEST, METHOD_NOT_FOUND, MCPError, parse_json
from mcpdi_transport._client._channel import (
    ConnectionLost,
    Inbound,
    SessionExpired,
    as_object,
    error_response,
    sole_exception,
)

__all__ = ("HttpChannel", "open_http_channel")

logger = logging.getLogger("mcpdi_transport.client")

_ACCEPT = "application/json, text/event-stream"
_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


class HttpChannel:
    """One MCP endpoint URL; keeps the legacy `Mcp-Session-Id` once `initialize` succeeded."""

    is_http = True

    def __init__(
        self, url: str, http: httpx2.AsyncClient, inbound: Inbound, group: anyio.abc.TaskGroup | None = None
    ) -> None:
        self.url = url
        self._http = http
        self._inbound = inbound
        self._group = group
        self._standalone: anyio.Event | None = None
        self.session_id: str | None = None
        self._version: str | None = None

    async def open_standalone(self) -> None:
        """Open the handshake-era session's GET stream (once), where the server sends what it says
        outside any request (`notifications/resources/updated`); return once it is open or refused."""
        if self._standalone is not None:
            await self._standalone.wait()
            return
        if self.session_id is None or self._group is None:
            return
        self._standalone = opened = anyio.Event()
        self._group.start_soon(self._read_standalone, opened)
        await opened.wait()

    async def _read_standalone(self, opened: anyio.Event) -> None:
        headers = self._headers({"accept": "text/event-stream"})
        headers.pop("content-type", None)
        try:
            async with self._http.stream("GET", self.url, headers=headers, timeout=None) as response:
                if response.status_code != 200:
                    logger.info("the server serves no GET stream (HTTP %s)", response.status_code)
                    return
                opened.set()
                async for event in httpx2.EventSource(response):
                    message = parse_json(event.data) if event.data else None
                    if isinstance(message, dict):
                        await self._route(message, None)  # pyright: ignore[reportUnknownArgumentType]
        except (httpx2.TransportError, MCPError) as exc:
            logger.debug("the GET stream ended: %s", exc)
        finally:
            opened.set()

    def _headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        headers = {"accept": _ACCEPT, "content-type": "application/json"}
        if self.session_id is not None:
            headers[_SESSION_HEADER] = self.session_id
        headers.update({name.lower(): value for name, value in extra.items()})
        if _VERSION_HEADER in headers:
            self._version = headers[_VERSION_HEADER]
        return headers

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        request_id = message["id"]
        try:
            async with self._http.stream(
                "POST", self.url, json=message, headers=self._headers(headers)
            ) as response:
                if response.status_code >= 400:
                    return await self._refusal(response, request_id)
                if response.status_code == 202:
                    msg = f"The server answered the {message['method']!r} request with 202 and no response"
                    raise MCPError(INVALID_REQUEST, msg)
                if message["method"] == "initialize" and (session := response.headers.get(_SESSION_HEADER)):
                    self.session_id = session
                content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if content_type == "application/json":
                    return _response_object(await response.aread(), request_id)
                if content_type == "text/event-stream":
                    return await self._read_stream(response, request_id, message["method"])
                msg = (
                    f"The server answered {message['method']!r} with unexpected content type {content_type!r}"
                )
                raise MCPError(INVALID_REQUEST, msg)
        except httpx2.TransportError as exc:
            msg = f"POST {self.url} failed: {exc}"
            raise ConnectionLost(msg) from exc

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        await self._post_one_way(message, headers)

    async def aclose(self) -> None:
        if self.session_id is None:
            return
        headers = {_SESSION_HEADER: self.session_id}
        if self._version is not None:
            headers[_VERSION_HEADER] = self._version
        try:
            response = await self._http.delete(self.url, headers=headers)
        except httpx2.TransportError as exc:
            logger.debug("DELETE of the session failed: %s", exc)
            return
        if response.status_code not in (200, 202, 204, 404, 405):
            logger.warning("DELETE of the session answered HTTP %s", response.status_code)

    async def _post_one_way(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        try:
            response = await self._http.post(self.url, json=message, headers=self._headers(headers))
        except httpx2.TransportError as exc:
            msg = f"POST {self.url} failed: {exc}"
            raise ConnectionLost(msg) from exc
        if response.status_code >= 400:
            logger.warning("the server refused a one-way message with HTTP %s", response.status_code)

    async def _refusal(self, response: httpx2.Response, request_id: str | int) -> dict[str, Any]:
        body = await response.aread()
        if response.status_code == 404 and self.session_id is not None:
            msg = f"The server no longer knows session {self.session_id} (HTTP 404)"
            self.session_id = None
            raise SessionExpired(INVALID_REQUEST, msg)
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            try:
                parsed = as_object(parse_json(body))
            except MCPError:
                parsed = None
            if parsed is not None and isinstance(parsed.get("error"), dict):
                return {**parsed, "id": request_id}  # servers answer id:null when they could not read it
        text = body.decode("utf-8", "replace").strip()[:200]
        code = METHOD_NOT_FOUND if response.status_code == 404 else INVALID_REQUEST
        msg = f"HTTP {response.status_code} from POST {self.url}" + (f": {text}" if text else "")
        raise MCPError(code, msg)

    async def _read_stream(
        self, response: httpx2.Response, request_id: str | int, method: str
    ) -> dict[str, Any]:
        async for event in httpx2.EventSource(response):
            if not event.data:
                continue  # priming events carry only an id
            try:
                message = parse_json(event.data)
            except MCPError:
                logger.warning("ignoring an SSE event that is not JSON: %.200r", event.data)
                continue
            if not isinstance(message, dict):
                continue
            found = await self._route(message, request_id)  # pyright: ignore[reportUnknownArgumentType]
            if found is not None:
                return found
        msg = f"The server ended the {method!r} event stream without a response"
        raise ConnectionLost(msg)

    async def _route(self, message: dict[str, Any], request_id: str | int | None) -> dict[str, Any] | None:
        method = message.get("method")
        if not isinstance(method, str):
            return message if _answers(message, request_id) else None
        params = as_object(message.get("params"))
        if "id" not in message:
            await self._inbound.on_notification(method, params)
            return None
        server_id = message["id"]
        try:
            result = await self._inbound.on_request(server_id, method, params)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": server_id, "result": result}
        except MCPError as exc:
            answer = error_response(server_id, exc)
        await self._post_one_way(answer, {_VERSION_HEADER: self._version} if self._version else {})
        return None


def _response_object(body: bytes, request_id: str | int) -> dict[str, Any]:
    try:
        message = parse_json(body)
    except MCPError as exc:
        msg = f"The server's JSON response does not parse: {exc.data}"
        raise MCPError(INVALID_REQUEST, msg) from None
    response = as_object(message)
    if response is None or not _answers(response, request_id):
        msg = f"The server's JSON response is not the response to request {request_id!r}"
        raise MCPError(INVALID_REQUEST, msg)
    return {**response, "id": request_id}


def _answers(message: dict[str, Any], request_id: str | int | None) -> bool:
    """Whether `message` answers `request_id` (an error the server could not tie to an id counts)."""
    return message.get("id") == request_id or (message.get("id") is None and "error" in message)


@asynccontextmanager
async def open_http_channel(
    url: str, inbound: Inbound, headers: Mapping[str, str] | None = None
) -> AsyncGenerator[HttpChannel]:
    """Yield a channel to `url`; on exit DELETE the legacy session, if one was opened."""
    try:
        async with (
            httpx2.AsyncClient(headers=dict(headers or {}), timeout=_TIMEOUT) as http,
            anyio.create_task_group() as group,
        ):
            channel = HttpChannel(url, http, inbound, group)
            try:
                yield channel
            finally:
                group.cancel_scope.cancel()  # the GET stream, if one was opened
                with anyio.CancelScope(shield=True):
                    await channel.aclose()
    except BaseExceptionGroup as failures:
        raise sole_exception(failures) from None
