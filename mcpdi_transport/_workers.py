"""Several processes serving one endpoint: a shared key ring, a shared replay store, one socket.

`mcpdi run --workers N` binds the socket once and starts N copies of itself on it (the kernel
spreads connections over them). Every copy must seal and open `requestState` with the same
keys and claim tokens in the same store, or a round landing on another process fails or
replays: the key ring comes from `MCPDI_STATE_KEYS` (comma-separated) or a file (one key a
line, the first seals, all verify), the store from `--redis URL`.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ("KEYS_VARIABLE", "configure_state", "read_key_ring", "supervise_workers")

KEYS_VARIABLE = "MCPDI_STATE_KEYS"
LISTEN_FD_OPTION = "--listen-fd"


class ConfigurationError(ValueError):
    """The command line or environment asks for something that cannot work."""


def read_key_ring(keys_file: Path | None, environ: Mapping[str, str] = os.environ) -> list[str] | None:
    """The configured ring, newest (sealing) key first; None when none is configured."""
    if keys_file is not None:
        try:
            text = keys_file.read_text(encoding="utf-8")
        except OSError as error:
            msg = f"cannot read the state key file {keys_file}: {error.strerror}"
            raise ConfigurationError(msg) from None
        keys = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if not keys:
            msg = f"the state key file {keys_file} holds no key (one key a line, the first seals)"
            raise ConfigurationError(msg)
        return keys
    value = environ.get(KEYS_VARIABLE, "")
    keys = [key.strip() for key in value.split(",") if key.strip()]
    return keys or None


def configure_state(server: Any, keys: Sequence[str] | None, redis_url: str | None) -> None:
    """Give an `MCPServer` that uses the default (per-process) state policy the shared keys, and
    any single-use policy the shared Redis replay store. A policy the author built is kept,
    except for the store, which `--redis` replaces."""
    from mcpdi import RequestStateSecurity

    current = getattr(server, "request_state", None)
    if not isinstance(current, RequestStateSecurity):
        if keys or redis_url:
            msg = "--redis and a state key ring apply to an MCPServer (a low-level Server seals no state)"
            raise ConfigurationError(msg)
        return
    if keys and current.is_ephemeral:
        try:
            current = RequestStateSecurity(
                keys=list(keys),
                ttl=current.ttl,
                audience=current.audience,
                single_use=current.replay_store is not None,
                bind_principal=current.bind_principal,
            )
        except ValueError as error:
            raise ConfigurationError(f"the state key ring is not usable: {error}") from None
        server.request_state = current
    if redis_url and current.replay_store is not None:
        from mcpdi_transport._redis import RedisReplayStore

        current.replay_store = RedisReplayStore(redis_url)


def inherited_socket(fd: int) -> socket.socket:
    """The listening socket a supervisor handed down."""
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)
    return sock


def supervise_workers(
    argv: Sequence[str], workers: int, sock: socket.socket, keys: Sequence[str] | None
) -> int:
    """Run `workers` copies of `mcpdi run` (argv without --workers) on `sock`; return the worst exit code.

    Without a configured ring the workers share a random one, made here: rounds move freely
    between them, and tokens die with this supervisor.
    """
    ring = list(keys) if keys else [secrets.token_hex(32)]
    environ = {**os.environ, KEYS_VARIABLE: ",".join(ring)}
    fd = sock.fileno()
    command = [sys.executable, "-m", "mcpdi_transport", *argv, LISTEN_FD_OPTION, str(fd)]
    children = [subprocess.Popen(command, env=environ, pass_fds=(fd,)) for _ in range(workers)]

    def forward(signum: int, _frame: object) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        codes = [child.wait() for child in children]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    return max((code for code in codes if code > 0), default=0)
