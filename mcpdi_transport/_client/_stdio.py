"""The client's stdio channel: spawn the server, one JSON-RPC message per line each way."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from mcpdi.lowlevel import MCPError, encode_message, parse_json
from mcpdi_transport._client._channel import (
    ConnectionLost,
    Inbound,
    as_object,
    error_response,
    sole_exception,
)

__all__ = ("StdioChannel", "StdioTarget", "open_stdio_channel")

logger = logging.getLogger("mcpdi_transport.client")

_SHUTDOWN_GRACE = 2.0


@dataclass(frozen=True, slots=True)
class StdioTarget:
    """A server to spawn: `command` with `args`; `env` is added to this process's environment."""

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


@dataclass(slots=True)
class _Waiter:
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class StdioChannel:
    """Requests are written to the child's stdin; a reader task routes stdout lines by id."""

    is_http = False

    def __init__(self, process: anyio.abc.Process, inbound: Inbound, group: anyio.abc.TaskGroup) -> None:
        self._process = process
        self._inbound = inbound
        self._group = group
        self._waiters: dict[str | int, _Waiter] = {}
        self._write_lock = anyio.Lock()
        self._closed = False
        self._exit_note = "the server process closed its stdout"

    async def request(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        request_id = message["id"]
        waiter = _Waiter()
        self._waiters[request_id] = waiter
        try:
            await self._write(message)
            await waiter.done.wait()
        finally:
            self._waiters.pop(request_id, None)
        if waiter.response is None:
            msg = f"No answer to {message['method']!r}: {self._exit_note}"
            raise ConnectionLost(msg)
        return waiter.response

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        await self._write(message)

    async def aclose(self) -> None:
        self._closed = True
        process = self._process
        if process.stdin is not None:
            with anyio.CancelScope(shield=True):
                await process.stdin.aclose()
        with anyio.move_on_after(_SHUTDOWN_GRACE, shield=True):
            await process.wait()
            return
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(_SHUTDOWN_GRACE, shield=True):
                await process.wait()
                return
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()

    async def _write(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        if stdin is None or self._closed:
            msg = "The stdio connection is closed"
            raise ConnectionLost(msg)
        line = encode_message(message) + b"\n"
        async with self._write_lock:
            try:
                await stdin.send(line)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                msg = f"Cannot write to the server process: {exc}"
                raise ConnectionLost(msg) from exc

    async def read_forever(self) -> None:
        """Read stdout until it ends, then fail every request still waiting."""
        stdout = self._process.stdout
        assert stdout is not None
        buffer = b""
        try:
            async for chunk in stdout:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    await self._receive_line(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            if not self._closed:  # stdout ended on its own: learn why, briefly
                with anyio.move_on_after(_SHUTDOWN_GRACE, shield=True):
                    await self._process.wait()
            returncode = self._process.returncode
            if returncode is not None:
                self._exit_note = f"the server process exited with code {returncode}"
            for waiter in self._waiters.values():
                waiter.done.set()

    async def _receive_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = parse_json(line)
        except MCPError:
            logger.warning("ignoring a stdout line that is not JSON: %.200r", line)
            return
        if not isinstance(message, dict):
            logger.warning("ignoring a stdout line that is not a JSON-RPC object: %.200r", line)
            return
        await self._route(message)  # pyright: ignore[reportUnknownArgumentType]

    async def _route(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            params = as_object(message.get("params"))
            if "id" in message:
                self._group.start_soon(self._answer, message["id"], method, params)
            else:
                await self._inbound.on_notification(method, params)
            return
        waiter = self._waiters.get(message.get("id"))  # pyright: ignore[reportArgumentType]
        if waiter is None:
            logger.debug("ignoring a response to an unknown or abandoned request: %r", message.get("id"))
            return
        waiter.response = message
        waiter.done.set()

    async def _answer(self, request_id: str | int, method: str, params: dict[str, Any] | None) -> None:
        try:
            result = await self._inbound.on_request(request_id, method, params)
            response: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except MCPError as exc:
            response = error_response(request_id, exc)
        try:
            await self._write(response)
        except ConnectionLost:
            logger.debug("could not answer server request %r: connection closed", request_id)


@asynccontextmanager
async def open_stdio_channel(target: StdioTarget, inbound: Inbound) -> AsyncGenerator[StdioChannel]:
    """Spawn `target` and yield its channel; on exit close stdin, then terminate, then kill."""
    env = None if target.env is None else {**os.environ, **target.env}
    process = await anyio.open_process(target.argv, env=env, cwd=target.cwd, stderr=None)
    try:
        async with anyio.create_task_group() as group:
            channel = StdioChannel(process, inbound, group)
            group.start_soon(channel.read_forever)
            try:
                yield channel
            finally:
                await channel.aclose()
                group.cancel_scope.cancel()
    except BaseExceptionGroup as failures:
        raise sole_exception(failures) from None
