"""The leaf every adapter shares: what a servable object is, and binding a listening socket."""

from __future__ import annotations

import contextlib
import errno
import socket
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcpdi.lowlevel import Runner

__all__ = ("CannotListen", "ServesMCP", "bind_socket", "connection_cap")


class ServesMCP(Protocol):
    """Anything with `running()`: the low-level `Server` and `MCPServer` both qualify."""

    def running(self) -> contextlib.AbstractAsyncContextManager[Runner[Any]]: ...


class CannotListen(OSError):
    """The HTTP server could not bind its address (in use, not permitted, unknown host)."""


def connection_cap(requested: int) -> int:
    """`requested`, lowered to what the open-file limit (`ulimit -n`) leaves for connections.

    A tenth of the limit (at least 32) stays for everything else the process opens (the
    listening socket, the event loop, logs, Redis, the files tools open): past the limit
    the server could accept no one, not even to say 503.
    """
    try:
        import resource
    except ImportError:  # not on Unix
        return requested
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft - max(32, soft // 10)))


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (`port=0` picks a free one)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        msg = f"cannot listen on {host}:{port}: {error.strerror}"
        raise CannotListen(msg) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        reason = (
            "address already in use" if error.errno == errno.EADDRINUSE else (error.strerror or str(error))
        )
        msg = f"cannot listen on {host}:{port}: {reason}"
        raise CannotListen(msg) from None
    sock.setblocking(False)
    return sock
