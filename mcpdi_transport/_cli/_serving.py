"""How `mcpdi run` serves over HTTP: one process, worker processes on one socket, or reloading."""

from __future__ import annotations

import contextlib
import functools
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpdi_transport._run_options import RunOptions
from mcpdi_transport._target import CommandError, split_target
from mcpdi_transport._workers import inherited_socket, supervise_workers

__all__ = ("reload", "serve_over_http", "supervise")


def _url(host: str, port: int, path: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def supervise(server: Any, options: RunOptions, argv: Sequence[str], keys: list[str] | None) -> None:
    from mcpdi_transport._listen import CannotListen, bind_socket

    try:
        sock = bind_socket(options.host, options.port)
    except CannotListen as error:
        raise CommandError(str(error)) from None
    port = sock.getsockname()[1]
    name = getattr(server, "name", "server")
    url = _url(options.host, port, options.path)
    print(f"Serving {name} on {url} with {options.workers} workers", file=sys.stderr, flush=True)
    child_argv = _without_option(argv, "--workers")
    child_argv = [*_without_option(child_argv, "--port"), "--port", str(port)]
    raise SystemExit(supervise_workers(child_argv, options.workers, sock, keys))


def _without_option(argv: Sequence[str], option: str) -> list[str]:
    """`argv` without `option` and its value (either `--opt VALUE` or `--opt=VALUE`)."""
    kept: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
        elif item == option:
            skip = True
        elif not item.startswith(f"{option}="):
            kept.append(item)
    return kept


def _shared_sessions(options: RunOptions) -> dict[str, Any]:
    """`sessions=RedisSessions(url)` for `serve_http` with `--shared-sessions`, else nothing."""
    if not options.shared_sessions or options.redis is None:
        return {}
    from mcpdi_transport._redis_sessions import RedisSessions

    return {"sessions": RedisSessions(options.redis)}


def serve_over_http(server: Any, options: RunOptions) -> None:
    """Serve `server` with `serve_http` (or `serve_sse`) and announce its URL; blocks."""
    import anyio

    from mcpdi_transport._listen import CannotListen
    from mcpdi_transport._serve import event_loop_options, serve_http, serve_sse

    inherited = {} if options.listen_fd is None else {"sock": inherited_socket(options.listen_fd)}
    serve = functools.partial(
        serve_sse if options.transport == "sse" else serve_http,
        server,
        options.host,
        options.port,
        **options.serve_http_keywords(),
        **inherited,
        **_shared_sessions(options),
    )

    async def serve_and_announce() -> None:
        async with anyio.create_task_group() as group:
            port = await group.start(serve)
            if inherited:
                return  # a worker: the supervisor announced the address
            name = getattr(server, "name", "server")
            print(f"Serving {name} on {_url(options.host, port, options.path)}", file=sys.stderr, flush=True)

    refused: list[CannotListen] = []
    try:
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn has already shut down cleanly
            anyio.run(serve_and_announce, backend_options=event_loop_options(options.loop))  # pyright: ignore[reportArgumentType]
    except* CannotListen as group:
        refused.extend(error for error in group.exceptions if isinstance(error, CannotListen))
    if refused:
        raise CommandError(str(refused[0]))


def reload(options: RunOptions, argv: Sequence[str]) -> None:
    """Serve in a child process, started again whenever a `.py` file beside the server changes."""
    import watchfiles

    path, _ = split_target(options.target)
    if not path.is_file():
        msg = f"no such file: {path}"
        raise CommandError(msg)
    child = [sys.executable, "-m", "mcpdi_transport", *(a for a in argv if a != "--reload")]

    def changed(changes: set[tuple[watchfiles.Change, str]]) -> None:
        names = ", ".join(sorted({Path(name).name for _, name in changes}))
        print(f"Reloading: {names} changed", file=sys.stderr, flush=True)

    watchfiles.run_process(
        path.resolve().parent,
        target=shlex.join(child),
        target_type="command",
        callback=changed,
        watch_filter=watchfiles.PythonFilter(),
    )
