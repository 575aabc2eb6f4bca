"""Driving a server in memory, without a transport: a scripted client for tests and examples.

`InMemoryClient` speaks JSON-RPC dicts to `Runner.handle` in either protocol era: in the
handshake era it answers the server's mid-call requests from a script, at 2026-07-28 it
answers `inputRequests` and retries with `requestState`, counting the rounds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from mcpdi.lowlevel._client_rounds import InputRequired, drive_rounds, read_input_required
from mcpdi.lowlevel._connection import Connection
from mcpdi.lowlevel._errors import MCPError
from mcpdi.lowlevel._runner import Runner

__all__ = ("ALL_CAPABILITIES", "Exchange", "InMemoryClient", "Script", "ScriptedPeer", "wire_answer")

MODERN = "2026-07-28"
ALL_CAPABILITIES: Mapping[str, Any] = {"elicitation": {"form": {}}, "sampling": {"tools": {}}, "roots": {}}

Script = Callable[[str | None, str, Mapping[str, Any] | None], Any]
"""`(key, method, params) -> answer`: the client's answer to one server question.

`key` is the question's `inputRequests` key (in the handshake era: the asking step's key,
when a resolver asks). The answer is a dict or a wire model; raising `MCPError` answers with
that error (handshake era).
"""


def wire_answer(answer: Any) -> dict[str, Any]:
    """A scripted answer (a dict or a wire model) as the JSON object the client sends."""
    dump = getattr(answer, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(mode="json", by_alias=True, exclude_none=True))
    return dict(answer)


def _describe(method: str, params: Mapping[str, Any]) -> str:
    """How errors name a request, as `Client` names it: "tools/call 'greet'"."""
    subject = params.get("name", params.get("uri"))
    return method if subject is None else f"{method} {subject!r}"


class ScriptedPeer:
    """A `Peer` double: records notifications and answers server requests from a script."""

    def __init__(self, script: Script | None = None, headers: Mapping[str, str] | None = None) -> None:
        self.script = script
        self.headers = headers
        self.requests: list[tuple[str, Mapping[str, Any] | None]] = []
        self.notifications: list[tuple[str, Mapping[str, Any] | None]] = []

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        self.notifications.append((method, params))

    async def request(
        self, method: str, params: Mapping[str, Any] | None, *, asking: str | None = None
    ) -> dict[str, Any]:
        self.requests.append((method, params))
        if self.script is None:
            msg = f"the in-memory client has no answer for {method!r}; pass a script"
            raise MCPError(-32601, msg)
        return wire_answer(self.script(asking, method, params))


@dataclass
class Exchange:
    """One request as the client saw it: the final response and how many rounds it took."""

    response: dict[str, Any]
    rounds: int = 1
    asked: list[tuple[str, Mapping[str, Any] | None]] = field(default_factory=lambda: [])

    @property
    def result(self) -> dict[str, Any]:
        if "result" not in self.response:
            msg = f"the request failed: {self.response.get('error')!r}"
            raise AssertionError(msg)
        return self.response["result"]

    @property
    def error(self) -> dict[str, Any]:
        return self.response["error"]

    @property
    def text(self) -> str:
        """The text of the first content block of a tool result."""
        return self.result["content"][0]["text"]


class InMemoryClient:
    """A client of one `Runner`, in the handshake era or at 2026-07-28 (`protocol_version`)."""

    def __init__(
        self,
        runner: Runner[Any],
        *,
        protocol_version: str = MODERN,
        capabilities: Mapping[str, Any] = ALL_CAPABILITIES,
        script: Script | None = None,
        headers: Mapping[str, str] | None = None,
        client_info: Mapping[str, Any] | None = None,
        stream: Connection | None = None,
        ids: Iterator[int] | None = None,
    ) -> None:
        """`stream` and `ids`: a handshake-era connection this runner already initialized, to
        share with other clients, and the request ids they draw from."""
        self.runner = runner
        self.protocol_version = protocol_version
        self.capabilities = dict(capabilities)
        self.client_info = dict(client_info or {"name": "in-memory", "version": "0"})
        self.peer = ScriptedPeer(script, headers)
        self.modern = protocol_version >= MODERN
        self._ids = ids if ids is not None else itertools.count(1)
        self._stream: Connection | None = stream
        self.round = 1  # the round of the request being answered (2026-07-28)

    async def connection(self) -> Connection:
        """The connection of the next request: fresh at 2026-07-28, one initialized stream before."""
        if self.modern:
            return Connection.for_modern_request()
        if self._stream is None:
            self._stream = Connection.for_stream()
            hello = {
                "protocolVersion": self.protocol_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            }
            answer = await self.runner.handle(
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, self._stream, self.peer
            )
            if answer is None or "result" not in answer:
                msg = f"initialize failed: {answer!r}"
                raise AssertionError(msg)
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await self.runner.handle(note, self._stream, self.peer)
        return self._stream

    async def send(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """One JSON-RPC request, as is (plus the 2026-07-28 envelope); the raw response."""
        body = dict(params or {})
        if self.modern:
            meta = dict(body.get("_meta") or {})
            meta.setdefault(PROTOCOL_VERSION_META_KEY, self.protocol_version)
            meta.setdefault(CLIENT_CAPABILITIES_META_KEY, self.capabilities)
            meta.setdefault(CLIENT_INFO_META_KEY, self.client_info)
            body["_meta"] = meta
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": body}
        answer = await self.runner.handle(message, await self.connection(), self.peer)
        assert answer is not None, "a request was not answered"
        return answer

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, max_rounds: int = 10
    ) -> Exchange:
        """A request, answering `inputRequests` from the script until the result is complete.

        More than `max_rounds` answered rounds raise `RoundLimitExceeded`, as `Client` does."""
        base = dict(params or {})
        asked_before = len(self.peer.requests)
        what = _describe(method, base)
        self.round = 0
        exchange = Exchange({})

        async def answer(key: str, asked: str, asked_params: Mapping[str, Any] | None) -> dict[str, Any]:
            exchange.asked.append((asked, asked_params))
            if self.peer.script is None:
                msg = f"the server asked {asked!r} and the client has no script"
                raise AssertionError(msg)
            return wire_answer(self.peer.script(key, asked, asked_params))

        async def send(answers: dict[str, Any] | None, state: str | None) -> dict[str, Any] | InputRequired:
            self.round += 1
            retry = dict(base)
            if answers is not None:
                retry["inputResponses"] = answers
            if state is not None:
                retry["requestState"] = state
            response = await self.send(method, retry)
            result = response.get("result")
            pending = read_input_required(result, what) if self.modern and result is not None else None
            return response if pending is None else pending

        exchange.response = await drive_rounds(
            await send(None, None), send=send, answer=answer, max_rounds=max_rounds, what=what
        )
        exchange.rounds = self.round
        if not self.modern:
            exchange.asked.extend(self.peer.requests[asked_before:])
        return exchange

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> Exchange:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("tools/call", params, **options)
