"""A server using every option a server carries: bearer auth, its own routes, debug, middleware,
telemetry, a lifespan and single-use request state. Served by every entry point of the matrix."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcpdi import AccessToken, AuthSettings, Context, Elicit, MCPServer, Resolve, get_access_token

GOOD_TOKEN = "matrix-good-token"
ISSUER = "https://auth.matrix.test"

trace.set_tracer_provider(TracerProvider())  # spans are recorded: the tool reads its own
middleware_saw: list[str] = []


class Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        if token != GOOD_TOKEN:
            return None
        return AccessToken(token=token, client_id="matrix", scopes=["read"], subject="alice")


async def count_calls(ctx: Any, call_next: Any) -> Any:
    middleware_saw.append(ctx.method)
    return await call_next(ctx)


@asynccontextmanager
async def lifespan(server: MCPServer[Any]) -> AsyncIterator[dict[str, str]]:
    yield {"lifespan": "entered"}


mcp = MCPServer(
    "Matrix",
    token_verifier=Verifier(),
    auth=AuthSettings(issuer_url=ISSUER),
    middleware=[count_calls],
    lifespan=lifespan,
    debug=True,
)


@mcp.custom_route("/healthz", methods=["GET"])
async def healthz(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


@mcp.custom_route("/crash", methods=["GET"])
async def crash(request: Request) -> PlainTextResponse:
    msg = "the route crashed on purpose"
    raise RuntimeError(msg)


@mcp.tool()
def report(ctx: Context) -> dict[str, Any]:
    """What this call ran with: its principal, the middleware, its span, the lifespan."""
    token = get_access_token()
    span = trace.get_current_span()
    return {
        "subject": token.subject if token is not None else None,
        "middleware": "tools/call" in middleware_saw,
        "span": getattr(span, "name", None),
        "lifespan": ctx.request_context.lifespan_context["lifespan"],
    }


class Confirm(BaseModel):
    ok: bool


def confirm(amount: int) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount}?", Confirm)


@mcp.tool()
def pay(amount: int, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
    return f"paid {amount}" if sure.ok else "not paid"


@mcp.tool(required_scopes=["read"])
def header(ctx: Context, name: str) -> str:
    """A request header the call came with."""
    return str((ctx.headers or {}).get(name))


@mcp.tool()
async def count(ctx: Context, to: int = 2) -> str:
    for step in range(1, to + 1):
        await ctx.report_progress(step, to, f"step {step}")
    return f"counted to {to}"


@mcp.resource("notes://{name}")
def note(name: str) -> str:
    return f"the note {name}"
