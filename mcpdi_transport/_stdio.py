"""stdio: newline-delimited JSON-RPC on stdin/stdout, each request in its own task."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Generator, Mapping
from typing import Any, Final, cast

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream

from mcpdi import authenticated
from mcpdi.lowlevel import (
    INTERNAL_ERROR,
    PARSE_ERROR,
    Connection,
    Invalid,
    MCPError,
    NoBackChannel,
    Notification,
    Request,
    RequestId,
    Runner,
    classify_message,
    encode_message,
    error_response,
    notification_message,
    parse_json,
)
from mcpdi_transport._listen import ServesMCP
from mcpdi_transport._outbound import OutboundRequests, request_key
from mcpdi_transport._serving import serve_message
from mcpdi_transport._serving_options import serving_options_of, stdio_principal

__all__ = ("serve_stdio",)

logger = logging.getLogger("mcpdi_transport")

MAX_LINE: Final = 4 * 1024 * 1024
"""Longer lines are answered with a parse error and skipped."""

EOF_GRACE: Final = 10.0
"""Seconds in-flight requests may still finish after stdin closes."""

CLIENT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds a server-to-client request waits for the client's answer."""

_LINE_TOO_LONG: Final = MCPError(PARSE_ERROR, "Parse error", f"the line is longer than {MAX_LINE} bytes")
_SHUTTING_DOWN: Final = "The server is shutting down: stdin closed and the grace period ended"


class _Wire:
    """The outgoing side of the connection and the server-to-client requests awaiting answers."""

    def __init__(self, out: anyio.abc.ByteSendStream, *, client_request_timeout: float) -> None:
        self._out = out
        self._lock = anyio.Lock()
        self._outbound = OutboundRequests(timeout=client_request_timeout)
        self.closed = False

    async def write(self, message: Mapping[str, Any]) -> None:
        """Send one message; a response always goes out (see `encode_message`)."""
        data = encode_message(message) + b"\n"
        async with self._lock:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self._out.send(data)

    def deliver(self, message: Mapping[str, Any]) -> None:
        self._outbound.deliver(message)

    def close(self) -> None:
        """stdin ended: no answer can come any more."""
        self.closed = True
        self._outbound.fail_all()

    async def ask(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        if self.closed:
            raise MCPError(INTERNAL_ERROR, f"stdin is closed, so the client cannot answer {method!r}")
        return await self._outbound.send(method, params, self.write, gone="stdin closed")


class _StdioPeer:
    """The peer of one request on the stream: notifications and (legacy) requests go to stdout."""

    __slots__ = ("_connection", "_wire")

    def __init__(self, wire: _Wire, connection: Connection) -> None:
        self._wire = wire
        self._connection = connection

    @property
    def headers(self) -> Mapping[str, str] | None:
        return None

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        await self._wire.write(notification_message(method, params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        if self._connection.era == "modern":
            raise NoBackChannel(method, "protocol 2026-07-28 has no server-to-client requests")
        return await self._wire.ask(method, params)


class _InFlight:
    """The requests of the connection still running, by id, and a signal when none is."""

    def __init__(self) -> None:
        self.scopes: dict[str, tuple[RequestId, anyio.CancelScope]] = {}
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, id_: RequestId, scope: anyio.CancelScope) -> None:
        if not self.scopes:
            self._empty = anyio.Event()
        self.scopes[request_key(id_)] = (id_, scope)

    def remove(self, id_: RequestId) -> None:
        self.scopes.pop(request_key(id_), None)
        if not self.scopes:
            self._empty.set()

    def cancel(self, id_: object) -> None:
        entry = self.scopes.get(request_key(id_))
        if entry is not None:
            entry[1].cancel()

    async def wait_empty(self) -> None:
        await self._empty.wait()


async def _serve_lines(
    runner: Runner[Any],
    lines: anyio.abc.ByteReceiveStream,
    out: anyio.abc.ByteSendStream,
    *,
    eof_grace: float,
    client_request_timeout: float = CLIENT_REQUEST_TIMEOUT,
    on_grace_over: Callable[[], None] | None = None,
) -> None:
    wire = _Wire(out, client_request_timeout=client_request_timeout)
    # This loop owns cancellation: `notifications/cancelled` cancels the request's task here.
    connection = Connection.for_stream(transport_cancels=True)
    peer = _StdioPeer(wire, connection)

    async def standalone(method: str, params: Mapping[str, Any] | None) -> None:
        await wire.write(notification_message(method, params))

    connection.standalone = standalone
    in_flight = _InFlight()
    reader = _LineReader(lines)

    async def answer(message: Mapping[str, Any]) -> None:
        response = await serve_message(runner, message, connection, peer)
        if response is not None:
            await wire.write(response)

    async def serve_request(message: Mapping[str, Any], request: Request, scope: anyio.CancelScope) -> None:
        # A failure here must not end the task group: every other request runs in it.
        try:
            with scope:
                await answer(message)
        except Exception:
            logger.exception("answering %r failed", request.method)
        finally:
            in_flight.remove(request.id)

    async with anyio.create_task_group() as group:
        while True:
            raw = await reader.next_line()
            if raw is None:
                break
            if raw is _TOO_LONG:
                await wire.write(error_response(None, _LINE_TOO_LONG))
                continue
            if not raw.strip():
                continue
            try:
                parsed = parse_json(raw)
            except MCPError as error:
                await wire.write(error_response(None, error))
                continue
            kind = classify_message(parsed)
            if isinstance(kind, Invalid):
                await wire.write(error_response(kind.id, kind.error))
            elif isinstance(kind, Request):
                message = cast("Mapping[str, Any]", parsed)
                if kind.method == "initialize":
                    # Inline, so the era and the handshake are settled before the next line.
                    await answer(message)
                    continue
                scope = anyio.CancelScope()
                in_flight.add(kind.id, scope)
                group.start_soon(serve_request, message, kind, scope)
            elif isinstance(kind, Notification):
                if kind.method == "notifications/cancelled" and kind.params is not None:
                    in_flight.cancel(kind.params.get("requestId"))
                    continue
                await answer(cast("Mapping[str, Any]", parsed))
            else:
                wire.deliver(kind.message)
        wire.close()
        with anyio.move_on_after(eof_grace):
            await in_flight.wait_empty()
        for id_, scope in list(in_flight.scopes.values()):
            await wire.write(error_response(id_, MCPError(INTERNAL_ERROR, _SHUTTING_DOWN)))
            scope.cancel()
        if in_flight.scopes and on_grace_over is not None:
            on_grace_over()
        group.cancel_scope.cancel()


_TOO_LONG: Final = b"\0too long"


class _LineReader:
    """Splits a byte stream into lines; a line over `MAX_LINE` bytes comes out as `_TOO_LONG`."""

    def __init__(self, stream: anyio.abc.ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._skipping = False

    async def next_line(self) -> bytes | None:
        """The next line without its newline; None at the end of the stream."""
        while True:
            index = self._buffer.find(b"\n")
            if index >= 0:
                line = bytes(self._buffer[:index])
                del self._buffer[: index + 1]
                if self._skipping:
                    self._skipping = False
                    continue
                return line
            if len(self._buffer) > MAX_LINE:
                self._buffer.clear()
                if not self._skipping:
                    self._skipping = True
                    return _TOO_LONG
            try:
                self._buffer.extend(await self._stream.receive())
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                if self._buffer and not self._skipping:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None


class _ThreadReader(anyio.abc.ByteReceiveStream):
    """Reads a file descriptor in a daemon thread, so a blocked read never holds up exit."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._chunks: MemoryObjectReceiveStream[bytes] | None = None

    def start(self) -> None:
        sender, self._chunks = anyio.create_memory_object_stream[bytes](16)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            try:
                while chunk := os.read(self._fd, 65536):
                    anyio.from_thread.run(sender.send, chunk, token=token)
            except Exception:  # the loop is gone, or the descriptor: nothing left to feed
                pass
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(sender.close, token=token)

        threading.Thread(target=pump, name="mcpdi-stdin", daemon=True).start()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        assert self._chunks is not None
        return await self._chunks.receive()

    async def aclose(self) -> None:
        if self._chunks is not None:
            await self._chunks.aclose()


class _FdWriter(anyio.abc.ByteSendStream):
    """Writes to a file descriptor from a worker thread (a full pipe must not stall the loop)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            written = await anyio.to_thread.run_sync(os.write, self._fd, view)
            view = view[written:]

    async def aclose(self) -> None:
        pass


_EXIT_AFTER_GRACE: Final = 1.0


def _exit_soon() -> None:
    """End the process shortly unless it ends first: worker threads cannot be cancelled."""

    def exit_now() -> None:
        logger.warning("exiting with requests still running in worker threads")
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(_EXIT_AFTER_GRACE, exit_now)
    timer.daemon = True
    timer.start()


@contextlib.contextmanager
def _claim_std_streams() -> Generator[tuple[int, int]]:
    """Private copies of fds 0 and 1 for the wire; fd 1 and `sys.stdout` point at stderr meanwhile.

    A stray `print()` in a tool or a child process then lands on stderr instead of
    corrupting the protocol stream; fd 0 reads the null device for the same reason.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_stdout = sys.stdout
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(2, 1)
        os.dup2(null, 0)
        sys.stdout = sys.stderr
        yield wire_in, wire_out
    finally:
        sys.stdout = saved_stdout
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
        os.close(null)
        os.close(wire_out)
        # wire_in stays open: the reader thread may still block on it until the process exits.


async def serve_stdio(
    server: ServesMCP,
    stdin: anyio.abc.ByteReceiveStream | None = None,
    stdout: anyio.abc.ByteSendStream | None = None,
    *,
    eof_grace: float = EOF_GRACE,
    client_request_timeout: float = CLIENT_REQUEST_TIMEOUT,
) -> None:
    """Serve `server` over newline-delimited JSON-RPC until stdin ends.

    Without explicit streams this uses the process's stdin and stdout, and stdout only
    carries protocol messages while serving. A line that is not strict JSON is answered
    with `-32700` (id null) and the connection lives on. On EOF the requests still running
    get `eof_grace` seconds to finish, then an error answer; a synchronous tool still
    busy in a worker thread then cannot hold the process: it exits
    `_EXIT_AFTER_GRACE` seconds later. A server-to-client request fails after
    `client_request_timeout` seconds without an answer.

    With bearer auth on the server, every request runs as the principal of the token in
    `MCPDI_ACCESS_TOKEN`, checked by the server's own verifier before serving
    (`StdioAuthError` when it refuses); without that variable the server says at start that
    its requests run without a token.
    """
    principal = await stdio_principal(server)
    routes = serving_options_of(server).routes
    if routes:
        paths = ", ".join(route.path for route in routes)
        logger.info("custom routes (%s) are served over HTTP only, not on stdio", paths)
    with contextlib.nullcontext() if principal is None else authenticated(principal):
        await _serve_stdio(
            server, stdin, stdout, eof_grace=eof_grace, client_request_timeout=client_request_timeout
        )


async def _serve_stdio(
    server: ServesMCP,
    stdin: anyio.abc.ByteReceiveStream | None,
    stdout: anyio.abc.ByteSendStream | None,
    *,
    eof_grace: float,
    client_request_timeout: float,
) -> None:
    async with server.running() as runner:
        if stdin is not None and stdout is not None:
            await _serve_lines(
                runner, stdin, stdout, eof_grace=eof_grace, client_request_timeout=client_request_timeout
            )
            return
        with _claim_std_streams() as (wire_in, wire_out):
            reader = stdin
            if reader is None:
                thread_reader = _ThreadReader(wire_in)
                thread_reader.start()
                reader = thread_reader
            await _serve_lines(
                runner,
                reader,
                stdout or _FdWriter(wire_out),
                eof_grace=eof_grace,
                client_request_timeout=client_request_timeout,
                on_grace_over=_exit_soon,
            )
