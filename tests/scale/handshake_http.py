"""Raw 2025-11-25 requests for the scale tests: initialize, POST, read SSE events, choosing the backend."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2

VERSION = "2025-11-25"


@dataclass
class Event:
    id: str | None
    message: dict[str, Any] | None
    """The JSON-RPC message, or None for a priming event (an id, empty data)."""


def headers(session_id: str | None = None, **extra: str) -> dict[str, str]:
    sent = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": VERSION,
        **extra,
    }
    if session_id is not None:
        sent["mcp-session-id"] = session_id
    return sent


def events(response: httpx2.Response) -> Iterator[Event]:
    """The SSE events of `response` as they arrive (comments and pings skipped)."""
    event_id: str | None = None
    data: list[str] = []
    seen = False
    for line in response.iter_lines():
        if line == "":
            if seen:
                text = "\n".join(data)
                yield Event(event_id, json.loads(text) if text else None)
            event_id, data, seen = None, [], False
        elif line.startswith("id:"):
            event_id, seen = line[3:].strip(), True
        elif line.startswith("data:"):
            data.append(line[5:].strip())
            seen = True
        elif line.startswith(("event:", "retry:")):
            seen = True


def request(id_: int, method: str, params: Mapping[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": dict(params or {})})


@contextmanager
def post_stream(url: str, session_id: str | None, body: str) -> Iterator[httpx2.Response]:
    with (
        httpx2.Client(timeout=30) as client,
        client.stream("POST", url, content=body, headers=headers(session_id)) as response,
    ):
        yield response


def answer_of(url: str, session_id: str | None, body: str) -> tuple[httpx2.Response, dict[str, Any]]:
    """POST a request and read its SSE answer to the end: the response and the last message."""
    with post_stream(url, session_id, body) as response:
        assert response.status_code == 200, response.read()
        messages = [event.message for event in events(response) if event.message is not None]
    return response, messages[-1]


def initialize(url: str) -> str:
    """A new session on `url`, initialized (the notification sent): its id."""
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "scale-test", "version": "0"},
    }
    response, answer = answer_of(url, None, request(0, "initialize", params))
    assert answer["result"]["protocolVersion"] == VERSION
    session_id = response.headers["mcp-session-id"]
    notify(url, session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session_id


def notify(url: str, session_id: str, message: Mapping[str, Any]) -> httpx2.Response:
    """POST a notification or a response to a server request (answered 202 when accepted)."""
    return httpx2.post(url, content=json.dumps(message), headers=headers(session_id), timeout=30)


def call(url: str, session_id: str, name: str, arguments: Mapping[str, Any], id_: int = 1) -> dict[str, Any]:
    _, answer = answer_of(url, session_id, request(id_, "tools/call", {"name": name, "arguments": arguments}))
    return answer
