"""`HttpExchange`: one HTTP request and the way to answer it, as the handshake-era endpoint passes it."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpdi_transport._http._common import header_values, json_reply

__all__ = ("HttpExchange",)


@dataclass(frozen=True, slots=True)
class HttpExchange:
    """The ASGI scope, receive and send of one request, with the replies the endpoint sends."""

    scope: Scope
    receive: Receive
    send: Send
    decoded_headers: Mapping[str, str] | None = None
    """`headers`, when whoever made the exchange has them already."""
    loop: asyncio.AbstractEventLoop | None = None
    """The running asyncio loop, when whoever made the exchange has it (`running_loop`)."""

    @property
    def method(self) -> str:
        return self.scope["method"]

    @property
    def headers(self) -> Mapping[str, str]:
        """Lower-cased names to the first value of each header (decoded once per request)."""
        decoded = self.decoded_headers
        return header_values(self.scope) if decoded is None else decoded

    def reply(
        self,
        body: Mapping[str, Any] | None,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Coroutine[Any, Any, None]:
        """Answer with one JSON object (or, with `body=None`, no body): await it."""
        return json_reply(self.scope, self.receive, self.send, body, status=status, headers=headers)

    async def accept(self, headers: Mapping[str, str] | None = None) -> None:
        """Answer 202 Accepted with no body: a notification or a response was taken."""
        await Response(status_code=202, headers=headers)(self.scope, self.receive, self.send)

    async def answer_empty(self, headers: Mapping[str, str] | None = None) -> None:
        """Answer 200 with no body (a session ended by DELETE)."""
        await Response(status_code=200, headers=headers)(self.scope, self.receive, self.send)

    def sending_through(self, send: Send) -> HttpExchange:
        """The same request, answered through `send` (which watches what goes out)."""
        return HttpExchange(self.scope, self.receive, send, self.decoded_headers, self.loop)
