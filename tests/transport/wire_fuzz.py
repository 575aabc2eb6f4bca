"""The wire fuzzer: random and mutated JSON-RPC messages and raw bytes against live servers.

Shared by the test run (`test_transport_wire_fuzz.py`, a few hundred inputs) and the long
run (`benchmarks/fuzz_wire.py`). Each target is a real server: uvicorn on 127.0.0.1 (a free
port) in a background thread, or `mcpdi run` on stdio in a subprocess. After every input the
target must still answer a normal `tools/list` correctly, never with HTTP 5xx, and stay alive.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio.from_thread
import httpx2
from hypothesis import strategies as st
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers
from transport_sample_server import server

from mcpdi_transport._serve import serve_http

HERE: Final = Path(__file__).parent
SERVER_FILE: Final = HERE / "transport_sample_server.py"
ANSWER_TIMEOUT: Final = 10.0

# -- inputs ---------------------------------------------------------------------------------

# Tools that answer at once; those that wait for ever or for the client are left out.
_TOOLS: Final = ("echo", "huge", "surrogate", "query", "slow", "nope")
_METHODS: Final = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
)
_TOKENS: Final = (
    b"\\ud800",
    b"\\udfff",
    b"\\ud83d",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e999",
    b"9" * 5000,
    b"\xff",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf",
    b"\x00",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b'"',
    b"\\",
    b"null",
    b"",
)

_text = st.text(st.one_of(st.characters(), st.sampled_from(("\ud800", "\udfff", "\ud83d"))), max_size=30)
"""Text with lone surrogates now and then: JSON can escape them, but they are no Unicode."""
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
_good_ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**63), _text)
_ids = st.one_of(_good_ids, st.none(), st.booleans(), st.floats(allow_nan=False))
_arguments = st.dictionaries(
    st.one_of(st.sampled_from(("text", "region", "q", "n")), st.text(max_size=8)), _values, max_size=3
)
_meta = st.one_of(st.just(MODERN_META), _values)
_params = st.one_of(
    _values,
    st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(_TOOLS), st.text(max_size=8)), "arguments": _arguments},
        optional={"_meta": _meta},
    ),
    st.fixed_dictionaries({"_meta": _meta}),
    st.just(initialize_body()["params"]),
)
_named_arguments = st.fixed_dictionaries({}, optional={"text": _text, "region": _text, "q": _text})
calls = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.one_of(_text, st.integers(min_value=-(2**63), max_value=2**63)),
        "method": st.just("tools/call"),
        "params": st.fixed_dictionaries(
            {"name": st.sampled_from(_TOOLS), "arguments": st.one_of(_named_arguments, _arguments)},
            optional={"_meta": st.just(MODERN_META)},
        ),
    }
)
"""Well-formed calls, so that tool results (huge numbers, lone surrogates) reach the write path."""
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.one_of(st.just("2.0"), _leaves),
        "id": _ids,
        "method": st.one_of(st.sampled_from(_METHODS), st.text(max_size=20)),
        "params": _params,
        "result": _values,
        "error": _values,
    },
)


def _dumped(message: dict[str, Any], ascii_only: bool = True) -> bytes:
    """JSON text; a lone surrogate cannot be UTF-8, so such text is always written as escapes."""
    try:
        return json.dumps(message, ensure_ascii=ascii_only).encode()
    except UnicodeEncodeError:
        return json.dumps(message).encode()


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    raw = _dumped(draw(st.one_of(calls, messages)), draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(raw)))
        kind = draw(st.sampled_from(("insert", "replace", "truncate")))
        token = draw(st.sampled_from(_TOKENS))
        if kind == "insert":
            raw = raw[:at] + token + raw[at:]
        elif kind == "replace":
            raw = raw[:at] + token + raw[at + len(token) :]
        else:
            raw = raw[:at]
    return raw


wire_inputs = st.one_of(
    calls.map(_dumped),
    messages.map(_dumped),
    _mutated(),
    st.binary(max_size=200),
)
"""What a peer may send as one body or one line."""


# -- targets --------------------------------------------------------------------------------


class HttpTarget:
    """A uvicorn server on 127.0.0.1 and one initialized handshake-era session on it."""

    def __init__(self, url: str, client: httpx2.Client) -> None:
        self.url = url
        self.client = client
        opened = client.post(url, json=initialize_body(), headers=LEGACY_HEADERS)
        self.session = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.session)
        self.session["mcp-protocol-version"] = "2025-11-25"
        self.tried = 0

    def headers(self, era: str, method: str = "tools/call", name: str | None = None) -> dict[str, str]:
        return self.session if era == "legacy" else modern_headers(method, name)

    def send(self, era: str, raw: bytes) -> None:
        """Post `raw`; assert the answer is no 5xx and JSON-RPC when JSON; then `tools/list` works.

        Modern-era headers name the body's method and tool when it has them, so that
        well-formed calls get past the header checks to the tools.
        """
        self.tried += 1
        method, name = _routing(raw)
        response = self.client.post(self.url, content=raw, headers=self.headers(era, method, name))
        assert response.status_code < 500, (response.status_code, response.text[:300])
        if response.headers.get("content-type") == "application/json":
            assert response.json().get("jsonrpc") == "2.0", response.text[:300]
        self.assert_serving(era)

    def assert_serving(self, era: str) -> None:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": "probe", "method": "tools/list"}
        if era == "modern":
            body["params"] = {"_meta": MODERN_META}
        listed = self.client.post(self.url, json=body, headers=self.headers(era, "tools/list"))
        assert listed.status_code == 200, (listed.status_code, listed.text[:300])
        if listed.headers["content-type"] == "text/event-stream":
            data = [line[6:] for line in listed.text.split("\r\n") if line.startswith("data: {")]
            answer = json.loads(data[-1])
        else:
            answer = listed.json()
        assert "echo" in {tool["name"] for tool in answer["result"]["tools"]}, answer


def _routing(raw: bytes) -> tuple[str, str | None]:
    """The method and tool name a modern client would put in headers for `raw` (ASCII only)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return "tools/call", None
    if not isinstance(body, dict):
        return "tools/call", None
    method = body.get("method")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    params = body.get("params")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    name = params.get("name") if isinstance(params, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    method = method if isinstance(method, str) and method.isascii() and method.isprintable() else "tools/call"
    name = name if isinstance(name, str) and name.isascii() and name.isprintable() else None
    return method, name


@contextmanager
def http_target(**options: Any) -> Iterator[HttpTarget]:
    """Serve the sample server with uvicorn in a background thread for as long as the block runs."""
    with anyio.from_thread.start_blocking_portal() as portal:
        serving, port = portal.start_task(
            partial(serve_http, server, "127.0.0.1", 0, log_level="error", **options)
        )
        try:
            with httpx2.Client(timeout=ANSWER_TIMEOUT) as client:
                yield HttpTarget(f"http://127.0.0.1:{port}/mcp", client)
        finally:
            serving.cancel()


class StdioTarget:
    """`mcpdi run` on stdio in a subprocess, initialized in the handshake era."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._lines: queue.Queue[bytes] = queue.Queue()
        stdout = process.stdout
        threading.Thread(target=lambda: [self._lines.put(line) for line in stdout], daemon=True).start()
        self.tried = 0
        self._probes = 0
        self._write(json.dumps(initialize_body()).encode())
        self._wait_for(1)
        self._write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _write(self, line: bytes) -> None:
        self._stdin.write(line + b"\n")
        self._stdin.flush()

    def _wait_for(self, id_: object) -> dict[str, Any]:
        while True:
            line = self._lines.get(timeout=ANSWER_TIMEOUT)
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == id_ and "method" not in message:
                return message  # pyright: ignore[reportUnknownVariableType]

    def send(self, raw: bytes) -> None:
        """Write `raw` as one line; then `tools/list` must work and the process be alive."""
        self.tried += 1
        self._write(raw.replace(b"\n", b" ").replace(b"\r", b" "))
        self._probes += 1
        probe = f"probe-{self._probes}"
        self._write(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "tools/list"}).encode())
        answer = self._wait_for(probe)
        assert "echo" in {tool["name"] for tool in answer["result"]["tools"]}, answer
        assert self.process.poll() is None


@contextmanager
def stdio_target() -> Iterator[StdioTarget]:
    command = [sys.executable, "-m", "mcpdi_transport", "run", str(SERVER_FILE)]
    process = subprocess.Popen(
        command,
        cwd=HERE.parent.parent,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield StdioTarget(process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
