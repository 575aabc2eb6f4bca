"""1.x decorator handlers mapped onto mcpdi's low-level `Server` (`on_*` handlers of `(ctx, params)`)."""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast

import mcp_types as types

from mcpdi.lowlevel._context import ServerRequestContext
from mcpdi.lowlevel._errors import MCPError
from mcpdi.lowlevel._handover import serve_async
from mcpdi.lowlevel._server import Server as _LowLevelServer

__all__ = ("NotificationOptions", "ReadResourceContents", "Server", "stdio_server")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
Handler = Callable[..., Awaitable[Any]]

_request: ContextVar[ServerRequestContext[Any]] = ContextVar("mcpdi_compat_request")


@dataclass
class NotificationOptions:
    """Which list-changed notifications 1.x announced; mcpdi sends none, so they change nothing."""

    prompts_changed: bool = False
    resources_changed: bool = False
    tools_changed: bool = False


@dataclass(frozen=True)
class ReadResourceContents:
    """One part of what a 1.x `read_resource` handler returns: text or bytes, and its MIME type."""

    content: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


class _Stdio:
    """What `stdio_server()` yields: the process's stdin and stdout, served by `Server.run`."""

    def __init__(self, end: str) -> None:
        self.end = end

    def __repr__(self) -> str:
        return f"<mcpdi stdio {self.end}>"


@asynccontextmanager
async def stdio_server() -> AsyncGenerator[tuple[Any, Any]]:
    """The 1.x `async with stdio_server() as (read, write)`: pass both to `Server.run`."""
    yield _Stdio("stdin"), _Stdio("stdout")


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _arity(func: Callable[..., Any]) -> int:
    return len(inspect.signature(func).parameters)


class Server(_LowLevelServer[Any]):
    """The 1.x low-level `Server(name, version=None, instructions=None, lifespan=...)` and its decorators."""

    def __init__(
        self,
        name: str,
        version: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[types.Icon] | None = None,
        lifespan: Callable[[Any], Any] | None = None,
    ) -> None:
        given: dict[str, Any] = {} if lifespan is None else {"lifespan": lifespan}
        super().__init__(
            name,
            version=version or "",
            instructions=instructions,
            website_url=website_url,
            icons=icons,
            **given,
        )
        self._tools: dict[str, types.Tool] = {}
        self._list_tools: Callable[..., Awaitable[Any]] | None = None

    # -- the request in flight --------------------------------------------------------

    @property
    def request_context(self) -> ServerRequestContext[Any]:
        """The request being handled (`lifespan_context`, `request_id`, `meta`, `session`).

        `LookupError` outside a request, as in 1.x.
        """
        return _request.get()

    def _register(self, method: str, params_type: type[Any], answer: Callable[[Any], Awaitable[Any]]) -> None:
        async def handler(ctx: ServerRequestContext[Any], params: Any) -> Any:
            token = _request.set(ctx)
            try:
                return await answer(params)
            except MCPError:
                raise
            except Exception as error:
                # 1.x answered a failing handler with its message as the JSON-RPC error, code 0
                raise MCPError(0, str(error)) from error
            finally:
                _request.reset(token)

        self.add_request_handler(method, params_type, handler)

    def _decorator(
        self, method: str, params_type: type[Any], call: Callable[[Handler, Any], Awaitable[Any]]
    ) -> Callable[[F], F]:
        """A 1.x decorator: `call(func, params)` turns the request into the function's call and back."""

        def decorator(func: F) -> F:
            async def answer(params: Any) -> Any:
                return await call(func, params)

            self._register(method, params_type, answer)
            return func

        return decorator

    def _lister(self, method: str, result_type: type[Any], field: str) -> Callable[[F], F]:
        """A 1.x `list_*` decorator: the function returns the items (or the whole result)."""

        async def listing(func: Handler, params: Any) -> Any:
            result = await (func(params) if _arity(func) else func())
            if isinstance(result, result_type):
                return result
            return result_type(**{field: list(result)})

        return self._decorator(method, types.PaginatedRequestParams, listing)

    # -- tools ----------------------------------------------------------------------

    def list_tools(self) -> Callable[[F], F]:
        def decorator(func: F) -> F:
            async def answer(params: Any) -> types.ListToolsResult:
                result = await (func(params) if _arity(func) else func())
                if isinstance(result, types.ListToolsResult):
                    tools = list(result.tools)
                else:
                    tools = list(result)
                    result = types.ListToolsResult(tools=tools)
                self._tools = {tool.name: tool for tool in tools}
                return result

            self._list_tools = func
            self._register("tools/list", types.PaginatedRequestParams, answer)
            return func

        return decorator

    async def _tool(self, name: str) -> types.Tool | None:
        if name not in self._tools and self._list_tools is not None:
            func = self._list_tools
            listed = await (func(None) if _arity(func) else func())
            tools = listed.tools if isinstance(listed, types.ListToolsResult) else listed
            self._tools = {tool.name: tool for tool in tools}
        return self._tools.get(name)

    def call_tool(self, *, validate_input: bool = True) -> Callable[[F], F]:
        if validate_input:
            try:
                _jsonschema()
            except ImportError as error:
                msg = f"{error}, or pass @server.call_tool(validate_input=False)"
                raise ImportError(msg) from None

        def decorator(func: F) -> F:
            async def answer(params: types.CallToolRequestParams) -> types.CallToolResult:
                arguments = dict(params.arguments or {})
                tool = await self._tool(params.name)
                if validate_input and tool is not None:
                    problem = _invalid(arguments, tool.input_schema)
                    if problem is not None:
                        return _error(f"Input validation error: {problem}")
                try:
                    results = await func(params.name, arguments)
                except Exception as error:  # 1.x: any failure is the tool's error result
                    return _error(str(error))
                return _tool_result(results, tool)

            self._register("tools/call", types.CallToolRequestParams, answer)
            return func

        return decorator

    # -- resources ------------------------------------------------------------------

    def list_resources(self) -> Callable[[F], F]:
        return self._lister("resources/list", types.ListResourcesResult, "resources")

    def list_resource_templates(self) -> Callable[[F], F]:
        return self._lister(
            "resources/templates/list", types.ListResourceTemplatesResult, "resource_templates"
        )

    def read_resource(self) -> Callable[[F], F]:
        async def read(func: Handler, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
            return types.ReadResourceResult(contents=_contents(params.uri, await func(params.uri)))

        return self._decorator("resources/read", types.ReadResourceRequestParams, read)

    # -- prompts and completion -----------------------------------------------------

    def list_prompts(self) -> Callable[[F], F]:
        return self._lister("prompts/list", types.ListPromptsResult, "prompts")

    def get_prompt(self) -> Callable[[F], F]:
        async def get(func: Handler, params: types.GetPromptRequestParams) -> types.GetPromptResult:
            return await func(params.name, params.arguments)

        return self._decorator("prompts/get", types.GetPromptRequestParams, get)

    def completion(self) -> Callable[[F], F]:
        async def complete(func: Handler, params: types.CompleteRequestParams) -> types.CompleteResult:
            completion = await func(params.ref, params.argument, params.context)
            if completion is None:
                completion = types.Completion(values=[], total=None, has_more=None)
            return types.CompleteResult(completion=completion)

        return self._decorator("completion/complete", types.CompleteRequestParams, complete)

    complete = completion

    def progress_notification(self) -> Callable[[F], F]:
        """Refused: mcpdi delivers no client-sent `notifications/progress` to handlers."""
        msg = (
            "@server.progress_notification() is not served by mcpdi: a client's progress "
            "notifications reach no handler; remove the handler (servers report their own "
            "progress with server.request_context.session.send_progress_notification)"
        )
        raise TypeError(msg)

    # -- serving ----------------------------------------------------------------------

    async def run(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        read_stream: Any,
        write_stream: Any,
        initialization_options: Any = None,
        raise_exceptions: bool = False,
        stateless: bool = False,
    ) -> None:
        """The 1.x `await server.run(read, write, server.create_initialization_options())`.

        `read_stream`/`write_stream` are what `stdio_server()` yields: the process's stdin/stdout.
        mcpdi derives the announced identity and capabilities from the server itself.
        """
        if isinstance(read_stream, _Stdio) and isinstance(write_stream, _Stdio):
            await serve_async(self, "stdio")
        else:
            msg = (
                "Server.run(read, write, ...) takes the pair stdio_server() yields, "
                f"not {type(read_stream).__name__}/{type(write_stream).__name__}; "
                "for HTTP serve server.streamable_http_app()"
            )
            raise TypeError(msg)


_NEEDS_JSONSCHEMA: Final = (
    "checking a tool's inputSchema or outputSchema needs the jsonschema package, as in 1.x: "
    "pip install jsonschema"
)


def _jsonschema() -> Any:
    """The `jsonschema` module; a clear ImportError when it is not installed."""
    try:
        import jsonschema
    except ModuleNotFoundError:
        raise ImportError(_NEEDS_JSONSCHEMA) from None
    return jsonschema


def _invalid(arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    jsonschema = _jsonschema()
    try:
        jsonschema.validate(instance=arguments, schema=schema)
    except jsonschema.ValidationError as error:
        return str(error.message)
    return None


def _tool_result(results: Any, tool: types.Tool | None) -> types.CallToolResult:
    if isinstance(results, types.CallToolResult):
        return results
    content: list[types.ContentBlock]
    structured: dict[str, Any] | None
    if isinstance(results, tuple):  # (content, structured), 1.x's combination
        pair = cast("tuple[Iterable[types.ContentBlock], dict[str, Any]]", results)
        content, structured = list(pair[0]), pair[1]
    elif isinstance(results, dict):
        structured = cast("dict[str, Any]", results)
        content = [types.TextContent(text=json.dumps(structured, indent=2))]
    elif isinstance(results, Iterable) and not isinstance(results, str | bytes):
        structured = None
        content = list(cast("Iterable[types.ContentBlock]", results))
    else:
        return _error(f"Unexpected return type from tool: {type(results).__name__}")
    schema = tool.output_schema if tool is not None else None
    if schema is not None:
        if structured is None:
            return _error("Output validation error: outputSchema defined but no structured output returned")
        try:
            problem = _invalid(structured, schema)
        except ImportError as error:
            return _error(f"Output validation error: {error}")
        if problem is not None:
            return _error(f"Output validation error: {problem}")
    return types.CallToolResult(content=content, structured_content=structured, is_error=False)


def _contents(uri: str, result: Any) -> list[types.TextResourceContents | types.BlobResourceContents]:
    parts: list[ReadResourceContents]
    if isinstance(result, str | bytes):
        parts = [ReadResourceContents(result)]
    elif isinstance(result, Iterable):
        parts = list(result)  # pyright: ignore[reportUnknownArgumentType]
    else:
        msg = f"Unexpected return type from read_resource: {type(result).__name__}"
        raise TypeError(msg)
    contents: list[types.TextResourceContents | types.BlobResourceContents] = []
    for part in parts:
        if isinstance(part.content, str):
            contents.append(
                types.TextResourceContents(
                    uri=uri, text=part.content, mime_type=part.mime_type or "text/plain"
                )
            )
        else:
            blob = base64.b64encode(part.content).decode()
            contents.append(
                types.BlobResourceContents(
                    uri=uri, blob=blob, mime_type=part.mime_type or "application/octet-stream"
                )
            )
    return contents
