"""`server.request_context` as in 1.x: `request_id`, `meta`, `session`, `lifespan_context`, `request`"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ConfigDict

from mcpdi.lowlevel import ServerRequestContext, current_http_scope
from mcpdi.lowlevel._request_session import RequestSession

__all__ = ("Meta", "RequestContext", "request_context_of")


class Meta(BaseModel):
    """A request's `_meta` as 1.x's `RequestParams.Meta`: `meta.progressToken`, other keys as extras."""

    model_config = ConfigDict(extra="allow")

    progressToken: str | int | None = None  # 1.x spells it so


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a 1.x handler reads from `server.request_context` for the request being answered.

    `request` is the Starlette `Request` of the HTTP POST that carried the message (None off
    HTTP), as 1.x set it; `context` is mcpdi's own `ServerRequestContext` of the same request.
    """

    request_id: Any
    meta: Meta | None
    session: RequestSession
    lifespan_context: Any
    request: Any
    context: ServerRequestContext[Any]


def request_context_of(ctx: ServerRequestContext[Any]) -> RequestContext:
    return RequestContext(
        request_id=ctx.request_id,
        meta=_meta_of(ctx.meta),
        session=ctx.session,
        lifespan_context=ctx.lifespan_context,
        request=_http_request(),
        context=ctx,
    )


def _meta_of(meta: Mapping[str, Any] | None) -> Meta | None:
    return None if meta is None else Meta.model_validate(dict(meta))


def _http_request() -> Any:
    """A Starlette `Request` over the scope the HTTP transport set; starlette is loaded only then."""
    scope = current_http_scope()
    if scope is None:
        return None
    from starlette.requests import Request

    return Request(cast("Any", scope))
