"""The MCP path's short way through the app answers exactly as the whole Starlette stack does.

A built app takes requests at its MCP path straight to the endpoint, which reads and limits
the body itself; once a middleware is added, every request takes Starlette's whole stack.
Both are served here by uvicorn and sent the same requests, good and bad, in both eras.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send
from transport_asgi import LEGACY_HEADERS, MODERN_META, initialize_body, modern_headers, uvicorn_app
from transport_sample_server import server

from mcpdi_transport._http._app import build_http_app

pytestmark = pytest.mark.anyio

_LIMIT = 2048


class _PassThrough:
    """A middleware that changes nothing: its presence alone sends requests through the whole stack."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _apps(**options: Any) -> tuple[Starlette, Starlette]:
    short = build_http_app(server, max_body_size=_LIMIT, **options)
    whole = build_http_app(server, max_body_size=_LIMIT, **options)
    whole.add_middleware(_PassThrough)
    return short, whole


@asynccontextmanager
async def _clients(**options: Any) -> AsyncIterator[tuple[httpx2.AsyncClient, httpx2.AsyncClient]]:
    short, whole = _apps(**options)
    async with AsyncExitStack() as stack:
        yield (
            await stack.enter_async_context(uvicorn_app(short)),
            await stack.enter_async_context(uvicorn_app(whole)),
        )


def _call(name: str, arguments: dict[str, Any], id_: int | str = 2, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


async def _trickled(body: bytes) -> AsyncIterator[bytes]:
    """The body as a chunked upload (no `Content-Length`), in pieces of 512 bytes."""
    for start in range(0, len(body), 512):
        yield body[start : start + 512]


def _answer(response: httpx2.Response, session_id: str | None) -> tuple[int, str, str, bool]:
    """What must match: status, content type, body (the app's own session id masked), and whether a
    session id came back."""
    text = response.text if session_id is None else response.text.replace(session_id, "<session>")
    return (
        response.status_code,
        response.headers.get("content-type", ""),
        text,
        "mcp-session-id" in response.headers,
    )


async def _sent(client: httpx2.AsyncClient, kind: str, body: Any, headers: dict[str, str]) -> httpx2.Response:
    if kind == "json":
        return await client.post("/mcp", json=body, headers=headers)
    if kind == "content":
        return await client.post("/mcp", content=body, headers=headers)
    return await client.post("/mcp", content=_trickled(body), headers=headers)


async def _legacy_sequence(client: httpx2.AsyncClient) -> list[tuple[int, str, str, bool]]:
    opened = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
    session_id = opened.headers["mcp-session-id"]
    session = {**LEGACY_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    big = json.dumps(_call("echo", {"text": "x" * (2 * _LIMIT)})).encode()
    requests: list[tuple[str, Any, dict[str, str]]] = [
        ("json", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session),
        ("json", _call("echo", {"text": "hello"}), session),
        ("json", _call("echo", {"text": "again"}, id_="str-id"), session),
        ("json", _call("nonesuch", {}), session),
        ("json", _call("query", {}), session),  # the tool raises (KeyError)
        ("json", _call("huge", {}), session),  # the result cannot be encoded
        ("json", {"jsonrpc": "2.0", "id": 3, "method": "no/such"}, session),
        ("json", {"jsonrpc": "2.0", "id": 4}, session),
        ("content", b"{", session),
        ("content", b"[]", session),
        ("content", big, session),
        ("chunked", big, session),
        (
            "content",
            json.dumps(_call("echo", {"text": "no type"})).encode(),
            {**session, "content-type": "text/plain"},
        ),
        ("json", _call("echo", {"text": "host"}), {**session, "host": "evil.example"}),
        ("json", _call("echo", {"text": "origin"}), {**session, "origin": "http://evil.example"}),
        ("json", _call("echo", {"text": "no session"}), LEGACY_HEADERS),
        ("json", _call("echo", {"text": "other session"}), {**session, "mcp-session-id": "nonesuch"}),
        ("json", _call("echo", {"text": "accept"}), {**session, "accept": "text/html"}),
    ]
    answers = [_answer(opened, session_id)]
    for kind, body, headers in requests:
        answers.append(_answer(await _sent(client, kind, body, headers), session_id))
    answers.append(_answer(await client.put("/mcp", json={}, headers=session), session_id))
    answers.append(_answer(await client.delete("/mcp", headers=session), session_id))
    answers.append(
        _answer(await client.post("/mcp", json=_call("echo", {"text": "gone"}), headers=session), session_id)
    )
    return answers


async def _modern_sequence(client: httpx2.AsyncClient) -> list[tuple[int, str, str, bool]]:
    headers = modern_headers("tools/call", "echo")
    big = json.dumps(_call("echo", {"text": "x" * (2 * _LIMIT)}, _meta=MODERN_META)).encode()
    requests: list[tuple[str, Any, dict[str, str]]] = [
        ("json", _call("echo", {"text": "hello"}, _meta=MODERN_META), headers),
        ("json", _call("query", {}, _meta=MODERN_META), modern_headers("tools/call", "query")),
        ("json", _call("echo", {"text": "no meta"}), headers),
        (
            "json",
            _call("echo", {"text": "wrong name"}, _meta=MODERN_META),
            modern_headers("tools/call", "greet"),
        ),
        ("content", b"{", headers),
        ("content", big, headers),
        ("chunked", big, headers),
        ("json", _call("echo", {"text": "host"}, _meta=MODERN_META), {**headers, "host": "evil.example"}),
    ]
    answers: list[tuple[int, str, str, bool]] = []
    for kind, body, request_headers in requests:
        answers.append(_answer(await _sent(client, kind, body, request_headers), None))
    return answers


@pytest.mark.parametrize("json_response", [True, False])
async def test_handshake_era_requests_get_the_same_answers_either_way(json_response: bool) -> None:
    async with _clients(json_response=json_response) as (short, whole):
        short_answers = await _legacy_sequence(short)
        whole_answers = await _legacy_sequence(whole)
    assert short_answers == whole_answers
    statuses = [status for status, *_ in short_answers]
    assert {200, 202, 400, 404, 405, 406, 413, 421, 403} <= set(statuses)


async def test_2026_era_requests_get_the_same_answers_either_way() -> None:
    async with _clients(json_response=True) as (short, whole):
        short_answers = await _modern_sequence(short)
        whole_answers = await _modern_sequence(whole)
    assert short_answers == whole_answers
    assert {200, 400, 413, 421} <= {status for status, *_ in short_answers}


async def test_a_stateless_app_answers_the_same_either_way() -> None:
    async with _clients(json_response=True, stateless=True) as (short, whole):
        answers = []
        for client in (short, whole):
            sent = [
                await client.post("/mcp", json=_call("echo", {"text": "hi"}), headers=LEGACY_HEADERS),
                await client.post("/mcp", json=_call("query", {}), headers=LEGACY_HEADERS),
                await client.post("/mcp", content=b"{", headers=LEGACY_HEADERS),
                await client.get("/mcp", headers=LEGACY_HEADERS),
            ]
            answers.append([_answer(response, None) for response in sent])
    assert answers[0] == answers[1]
    assert [status for status, *_ in answers[0]] == [200, 200, 400, 405]


def _crashing_on(header: str, real: Any) -> Any:
    """`header_values` that raises for a request carrying `header`: an exception escaping the endpoint."""

    def header_values(scope: Scope) -> Any:
        if any(name == header.encode() for name, _ in scope["headers"]):
            msg = "escaped the endpoint on purpose"
            raise RuntimeError(msg)
        return real(scope)

    return header_values


@pytest.mark.parametrize("debug", [False, True])
async def test_an_exception_escaping_the_endpoint_is_answered_500_either_way(
    debug: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import mcpdi_transport._http._app as app_module

    monkeypatch.setattr(app_module, "header_values", _crashing_on("x-crash", app_module.header_values))
    answers: list[tuple[int, bool, int]] = []
    async with _clients(json_response=True, debug=debug) as (short, whole):
        # uvicorn's logger does not reach the root one, where pytest listens: pytest's handler joins it.
        uvicorn_log = logging.getLogger("uvicorn.error")
        uvicorn_log.addHandler(caplog.handler)
        try:
            for client in (short, whole):
                crashed = await client.post(
                    "/mcp", json=initialize_body(), headers={**LEGACY_HEADERS, "x-crash": "1"}
                )
                # The server stays up: the next request is served as usual.
                served = await client.post("/mcp", json=initialize_body(), headers=LEGACY_HEADERS)
                traceback_page = "escaped the endpoint on purpose" in crashed.text
                answers.append((crashed.status_code, traceback_page, served.status_code))
                if not debug:
                    assert crashed.text == "Internal Server Error"
        finally:
            uvicorn_log.removeHandler(caplog.handler)
    assert answers == [(500, debug, 200), (500, debug, 200)]
    # The ASGI server logs what escaped, from either way in.
    escaped = [r for r in caplog.records if r.exc_info and "on purpose" in str(r.exc_info[1])]
    assert len(escaped) == 2
