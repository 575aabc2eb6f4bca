"""`build_dev_app`: the page, its static files, its JSON endpoints and the MCP endpoint on one origin."""

from __future__ import annotations

from importlib import resources
from typing import Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpdi.engine import explanation_record
from mcpdi_transport._dev._slot import ServerSlot
from mcpdi_transport._http._common import header_values
from mcpdi_transport._http._security import SecurityPolicy, security_policy

__all__ = ("MCP_PATH", "build_dev_app")

MCP_PATH: Final = "/mcp"
_MEDIA_TYPES: Final = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript"}

# The page talks only to its own origin and loads nothing from elsewhere.
_PAGE_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}


def _static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files, read once from the package: name to (bytes, media type)."""
    folder = resources.files("mcpdi_transport._dev") / "static"
    files: dict[str, tuple[bytes, str]] = {}
    for entry in folder.iterdir():
        suffix = entry.name[entry.name.rfind(".") :]
        if entry.is_file() and suffix in _MEDIA_TYPES:
            files[entry.name] = (entry.read_bytes(), _MEDIA_TYPES[suffix])
    return files


def _is_page_path(path: str) -> bool:
    return path == "/" or path.startswith(("/static/", "/dev/"))


class _Front:
    """Host and Origin checks (the MCP endpoint's own policy) for the page's routes; every other
    path goes to the slot, whose app serves `/mcp` and the server's own routes (its Protected
    Resource Metadata, its `custom_route`s) as any other way of serving it would."""

    def __init__(self, app: ASGIApp, policy: SecurityPolicy, slot: ServerSlot) -> None:
        self.app = app
        self.policy = policy
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not _is_page_path(scope["path"]):
            await self.slot(scope, receive, send)  # the MCP app checks the same policy itself
            return
        # Content-Type is the MCP endpoint's own rule; the page's routes are all GET.
        rejection = self.policy.check("GET", header_values(scope))
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _error(message: str, status_code: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status_code, headers={"cache-control": "no-store"})


def build_dev_app(slot: ServerSlot, *, host: str = "127.0.0.1") -> Starlette:
    """The dev page's app: `/` and `/static/*`, `/dev/status`, `/dev/graph/{tool}` (the tool's
    explanation, as `mcpdi graph --format json` gives it), and the server's own app for the rest.

    The server's own lifespan is the slot's to run (`ServerSlot.run`), not this app's.
    """
    files = _static_files()
    policy = security_policy(host, dns_rebinding_protection=True, allowed_hosts=None, allowed_origins=None)

    def serve_file(name: str) -> Response:
        found = files.get(name)
        if found is None:
            return _error(f"no file named {name!r} in the page", 404)
        body, media_type = found
        return Response(body, media_type=media_type, headers=_PAGE_HEADERS)

    async def page(request: Request) -> Response:
        return serve_file("index.html")

    async def static(request: Request) -> Response:
        return serve_file(request.path_params["name"])

    async def status(request: Request) -> Response:
        current = slot.current
        return JSONResponse(
            {
                "server": str(getattr(current.server, "name", type(current.server).__name__)),
                "file": str(slot.watched),
                "root": slot.watched.resolve().parent.as_uri(),
                "version": current.generation,
                "reloadError": slot.reload_error,
            },
            headers={"cache-control": "no-store"},
        )

    async def graph(request: Request) -> Response:
        name = request.path_params["tool"]
        explain = getattr(slot.current.server, "explain", None)
        if explain is None:
            return _error(
                "a low-level Server has no resolver plans; only an MCPServer's tools have a graph", 409
            )
        try:
            (explanation,) = explain(name)
        except KeyError:
            return _error(f"no tool named {name!r}", 404)
        # The record `mcpdi graph --format json` prints for the tool: the page draws it.
        return JSONResponse(explanation_record(explanation), headers={"cache-control": "no-store"})

    app = Starlette(
        routes=[
            Route("/", page, methods=["GET"]),
            Route("/static/{name}", static, methods=["GET"]),
            Route("/dev/status", status, methods=["GET"]),
            Route("/dev/graph/{tool}", graph, methods=["GET"]),
        ],
    )
    app.add_middleware(_Front, policy=policy, slot=slot)
    return app
