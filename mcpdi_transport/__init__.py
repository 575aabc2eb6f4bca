"""mcpdi_transport: stdio and Streamable HTTP adapters, the client and the mcpdi command.

Names load on first use, so `mcpdi run` on stdio does not pay for starlette, uvicorn and httpx2.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpdi.lowlevel import RoundLimitExceeded as RoundLimitExceeded
    from mcpdi_transport._client._callbacks import ClientRequestContext as ClientRequestContext
    from mcpdi_transport._client._callbacks import ElicitationCallback as ElicitationCallback
    from mcpdi_transport._client._callbacks import ListRootsCallback as ListRootsCallback
    from mcpdi_transport._client._callbacks import LoggingCallback as LoggingCallback
    from mcpdi_transport._client._callbacks import MessageHandler as MessageHandler
    from mcpdi_transport._client._callbacks import ProgressCallback as ProgressCallback
    from mcpdi_transport._client._callbacks import RequestContext as RequestContext
    from mcpdi_transport._client._callbacks import SamplingCallback as SamplingCallback
    from mcpdi_transport._client._channel import Channel as Channel
    from mcpdi_transport._client._channel import ChannelTarget as ChannelTarget
    from mcpdi_transport._client._channel import ConnectionLost as ConnectionLost
    from mcpdi_transport._client._channel import Inbound as Inbound
    from mcpdi_transport._client._client import Client as Client
    from mcpdi_transport._client._extensions import ClaimContext as ClaimContext
    from mcpdi_transport._client._extensions import ClientExtension as ClientExtension
    from mcpdi_transport._client._extensions import NotificationBinding as NotificationBinding
    from mcpdi_transport._client._extensions import ResultClaim as ResultClaim
    from mcpdi_transport._client._extensions import UnexpectedClaimedResult as UnexpectedClaimedResult
    from mcpdi_transport._client._extensions import advertise as advertise
    from mcpdi_transport._client._listen import ListenNotSupportedError as ListenNotSupportedError
    from mcpdi_transport._client._listen import Subscription as Subscription
    from mcpdi_transport._client._listen import SubscriptionLost as SubscriptionLost
    from mcpdi_transport._client._stdio import StdioTarget as StdioTarget
    from mcpdi_transport._http._app import build_http_app as build_http_app
    from mcpdi_transport._http._sse_transport import build_sse_app as build_sse_app
    from mcpdi_transport._http._store import EventStore as EventStore
    from mcpdi_transport._http._store import SessionStore as SessionStore
    from mcpdi_transport._http._store import Trimmed as Trimmed
    from mcpdi_transport._jwt import JwtVerifier as JwtVerifier
    from mcpdi_transport._listen import CannotListen as CannotListen
    from mcpdi_transport._redis import RedisReplayStore as RedisReplayStore
    from mcpdi_transport._redis import StoreUnavailable as StoreUnavailable
    from mcpdi_transport._redis_sessions import RedisSessions as RedisSessions
    from mcpdi_transport._serve import run_server as run_server
    from mcpdi_transport._serve import serve_http as serve_http
    from mcpdi_transport._serve import serve_sse as serve_sse
    from mcpdi_transport._stdio import serve_stdio as serve_stdio

__all__ = (
    "CannotListen",
    "Channel",
    "ChannelTarget",
    "ClaimContext",
    "Client",
    "ClientExtension",
    "ClientRequestContext",
    "ConnectionLost",
    "ElicitationCallback",
    "EventStore",
    "Inbound",
    "JwtVerifier",
    "ListRootsCallback",
    "ListenNotSupportedError",
    "LoggingCallback",
    "MessageHandler",
    "NotificationBinding",
    "ProgressCallback",
    "RedisReplayStore",
    "RedisSessions",
    "RequestContext",
    "ResultClaim",
    "RoundLimitExceeded",
    "SamplingCallback",
    "SessionStore",
    "StdioTarget",
    "StoreUnavailable",
    "Subscription",
    "SubscriptionLost",
    "Trimmed",
    "UnexpectedClaimedResult",
    "advertise",
    "build_http_app",
    "build_sse_app",
    "run_server",
    "serve_http",
    "serve_sse",
    "serve_stdio",
)

_HOMES = {
    "build_http_app": "mcpdi_transport._http._app",
    "build_sse_app": "mcpdi_transport._http._sse_transport",
    "CannotListen": "mcpdi_transport._listen",
    "JwtVerifier": "mcpdi_transport._jwt",
    "Client": "mcpdi_transport._client._client",
    "ClaimContext": "mcpdi_transport._client._extensions",
    "ClientExtension": "mcpdi_transport._client._extensions",
    "NotificationBinding": "mcpdi_transport._client._extensions",
    "ResultClaim": "mcpdi_transport._client._extensions",
    "UnexpectedClaimedResult": "mcpdi_transport._client._extensions",
    "advertise": "mcpdi_transport._client._extensions",
    "ListenNotSupportedError": "mcpdi_transport._client._listen",
    "Subscription": "mcpdi_transport._client._listen",
    "SubscriptionLost": "mcpdi_transport._client._listen",
    "Channel": "mcpdi_transport._client._channel",
    "ChannelTarget": "mcpdi_transport._client._channel",
    "ConnectionLost": "mcpdi_transport._client._channel",
    "Inbound": "mcpdi_transport._client._channel",
    "ElicitationCallback": "mcpdi_transport._client._callbacks",
    "ListRootsCallback": "mcpdi_transport._client._callbacks",
    "LoggingCallback": "mcpdi_transport._client._callbacks",
    "MessageHandler": "mcpdi_transport._client._callbacks",
    "ProgressCallback": "mcpdi_transport._client._callbacks",
    "ClientRequestContext": "mcpdi_transport._client._callbacks",
    "RequestContext": "mcpdi_transport._client._callbacks",
    "SamplingCallback": "mcpdi_transport._client._callbacks",
    "RoundLimitExceeded": "mcpdi.lowlevel",
    "StdioTarget": "mcpdi_transport._client._stdio",
    "RedisReplayStore": "mcpdi_transport._redis",
    "StoreUnavailable": "mcpdi_transport._redis",
    "RedisSessions": "mcpdi_transport._redis_sessions",
    "EventStore": "mcpdi_transport._http._store",
    "SessionStore": "mcpdi_transport._http._store",
    "Trimmed": "mcpdi_transport._http._store",
    "run_server": "mcpdi_transport._serve",
    "serve_http": "mcpdi_transport._serve",
    "serve_sse": "mcpdi_transport._serve",
    "serve_stdio": "mcpdi_transport._stdio",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        msg = f"module 'mcpdi_transport' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
