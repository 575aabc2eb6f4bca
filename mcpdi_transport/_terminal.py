"""`mcpdi list` and `mcpdi call`: a small client for a person at a terminal.

The result goes to stdout; prompts and notes go to stderr, so the output can be piped. When
the server asks (a form, a completion), the person answers on stdin, field by field; the
client's roots are the working directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

import mcp_types as types

from mcpdi_transport._client._callbacks import ClientRequestContext
from mcpdi_transport._target import CommandError, load_server

__all__ = ("Credentials", "TerminalPrompts", "call_tool", "list_tools", "parse_arguments", "run_async")

_MAX_TRIES = 3
_REFUSALS = ("decline", "cancel")


def parse_arguments(pairs: Sequence[str], as_json: str | None) -> dict[str, Any]:
    """`name=value` pairs (a value is JSON when it parses as JSON, else a string), over `--json`."""
    arguments: dict[str, Any] = {}
    if as_json is not None:
        try:
            loaded: Any = json.loads(as_json)
        except json.JSONDecodeError as error:
            msg = f"--json is not valid JSON: {error}"
            raise CommandError(msg) from None
        if not isinstance(loaded, dict):
            msg = f"--json must be a JSON object of arguments, got {type(loaded).__name__}"
            raise CommandError(msg)
        arguments.update(cast("dict[str, Any]", loaded))
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            msg = f"arguments are name=value, got {pair!r}"
            raise CommandError(msg)
        try:
            arguments[name] = json.loads(value)
        except json.JSONDecodeError:
            arguments[name] = value
    return arguments


class TerminalPrompts:
    """Client callbacks (plain functions) that ask the person on `stdin`, writing to `stderr`."""

    def __init__(self, stdin: TextIO, stderr: TextIO) -> None:
        self.stdin = stdin
        self.stderr = stderr

    def _ask(self, prompt: str) -> str | None:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        return None if line == "" else line.strip()

    def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not isinstance(params, types.ElicitRequestFormParams):
            self.stderr.write(f"The server asks you to open {getattr(params, 'url', '?')}; declining.\n")
            return types.ElicitResult(action="decline")
        self.stderr.write(f"The server asks: {params.message}\n(type 'decline' or 'cancel' to refuse)\n")
        schema = params.requested_schema
        required = set(schema.get("required", ()))
        content: dict[str, Any] = {}
        for name, field in dict(schema.get("properties", {})).items():
            answer = self._field(name, dict(field), name in required)
            if answer in _REFUSALS:
                return types.ElicitResult(action=answer)  # type: ignore[arg-type]
            if answer is not _SKIP:
                content[name] = answer
        return types.ElicitResult(action="accept", content=content)

    def _field(self, name: str, field: Mapping[str, Any], required: bool) -> Any:
        label = field.get("title") or name
        kind = field.get("type", "string")
        choices = field.get("enum")
        hint = "/".join(map(str, choices)) if choices else ("yes/no" if kind == "boolean" else kind)
        default = field.get("default")
        shown = f" [{default}]" if default is not None else ("" if required else " [skip]")
        for _ in range(_MAX_TRIES):
            line = self._ask(f"  {label} ({hint}){shown}: ")
            if line is None:
                return "cancel"  # stdin ended: nobody is there to answer
            if line in _REFUSALS:
                return line
            if line == "":
                if default is not None:
                    return default
                if not required:
                    return _SKIP
                self.stderr.write("  an answer is required\n")
                continue
            value, problem = _convert(line, kind, choices)
            if problem is None:
                return value
            self.stderr.write(f"  {problem}\n")
        return "cancel"

    def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.stderr.write("The server asks for a completion:\n")
        for message in params.messages:
            for block in message.content_as_list:
                text = getattr(block, "text", None)
                self.stderr.write(f"  {message.role}: {text if text is not None else block.type}\n")
        reply = self._ask("Your reply as the model: ")
        content = types.TextContent(type="text", text=reply or "")
        return types.CreateMessageResult(role="assistant", content=content, model="terminal")

    def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        cwd = Path.cwd()
        return types.ListRootsResult(roots=[types.Root(uri=cwd.as_uri(), name=cwd.name)])  # pyright: ignore[reportArgumentType]


_SKIP: Any = object()


def _convert(line: str, kind: str, choices: Sequence[Any] | None) -> tuple[Any, str | None]:
    if kind == "boolean":
        lowered = line.lower()
        if lowered in ("y", "yes", "true", "1"):
            return True, None
        if lowered in ("n", "no", "false", "0"):
            return False, None
        return None, "answer yes or no"
    if kind in ("integer", "number"):
        try:
            return (int(line) if kind == "integer" else float(line)), None
        except ValueError:
            return None, f"answer a{'n integer' if kind == 'integer' else ' number'}"
    if choices and line not in [str(choice) for choice in choices]:
        return None, f"answer one of {', '.join(map(str, choices))}"
    return line, None


def _in_turn(ask: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """`ask` as a coroutine that blocks the loop while the person types. The client answers a
    round's questions together; run as plain functions in worker threads, they would race for
    the terminal, so they take turns here, in the order the server listed them."""

    async def in_turn(*args: Any) -> Any:
        return ask(*args)

    return in_turn


@dataclass(frozen=True, slots=True)
class Credentials:
    """What `mcpdi list` / `mcpdi call` send with every request: `--header NAME:VALUE` and `--token`."""

    headers: Mapping[str, str] = dataclasses.field(default_factory=dict[str, str])
    token: str | None = None

    @classmethod
    def parse(cls, headers: Sequence[str], token: str | None) -> Credentials:
        parsed: dict[str, str] = {}
        for item in headers:
            name, colon, value = item.partition(":")
            if not colon or not name.strip():
                msg = f"--header takes NAME:VALUE, got {item!r}"
                raise CommandError(msg)
            parsed[name.strip()] = value.strip()
        return cls(parsed, token)


@asynccontextmanager
async def _client(
    target: str, prompts: TerminalPrompts | None, mode: str, credentials: Credentials
) -> AsyncGenerator[Any]:
    """A connected client: over HTTP with the headers and `Authorization: Bearer`; in memory as the
    token's principal, verified by the server's own verifier as HTTP would."""
    from mcpdi import authenticated
    from mcpdi_transport._client._client import Client
    from mcpdi_transport._serving_options import StdioAuthError, verified_principal

    headers = dict(credentials.headers)
    principal = None
    if target.startswith(("http://", "https://")):
        server: Any = target
        if credentials.token is not None:
            headers["Authorization"] = f"Bearer {credentials.token}"
    else:
        server, _ = load_server(target)
        try:
            principal = await verified_principal(
                server, credentials.token or "", "the token given with --token"
            )
        except StdioAuthError as error:
            raise CommandError(str(error)) from None
    callbacks: dict[str, Any] = {}
    if prompts is not None:
        callbacks = {
            "elicitation_callback": _in_turn(prompts.elicit),
            "sampling_callback": _in_turn(prompts.sample),
            "list_roots_callback": _in_turn(prompts.list_roots),
        }
    with authenticated(principal) if principal is not None else contextlib.nullcontext():
        async with Client(server, mode=mode, headers=headers, **callbacks) as client:  # pyright: ignore[reportArgumentType]
            yield client


def _signature(tool: types.Tool) -> str:
    schema = tool.input_schema
    required = set(schema.get("required", ()))
    parts: list[str] = []
    for name, field in dict(schema.get("properties", {})).items():
        kind = field.get("type") or "any"
        parts.append(f"{name}: {kind}" + ("" if name in required else " = ..."))
    return f"{tool.name}({', '.join(parts)})"


async def list_tools(target: str, *, mode: str, out: TextIO, credentials: Credentials | None = None) -> None:
    """Print one line per tool: its call signature and the first line of its description."""
    async with _client(target, None, mode, credentials or Credentials()) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        about = (tool.description or "").strip().splitlines()
        out.write(_signature(tool) + (f"  {about[0]}" if about else "") + "\n")


async def call_tool(
    target: str,
    name: str,
    arguments: Mapping[str, Any],
    *,
    mode: str,
    stdin: TextIO,
    out: TextIO,
    err: TextIO,
    credentials: Credentials | None = None,
) -> bool:
    """Call `name`, answering the server's questions at the terminal; print the result.

    The progress the tool reports is shown on stderr as it comes. Returns False when the
    tool reported an error (its text goes to stderr).
    """

    async def show_progress(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        err.write(f"progress {done}" + (f": {message}" if message else "") + "\n")
        err.flush()

    async with _client(target, TerminalPrompts(stdin, err), mode, credentials or Credentials()) as client:
        result: types.CallToolResult = await client.call_tool(
            name, dict(arguments), progress_callback=show_progress
        )
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if result.is_error:
        err.write("\n".join(texts or ["the tool failed"]) + "\n")
        return False
    if texts:
        out.write("\n".join(texts) + "\n")
    elif result.structured_content is not None:
        out.write(json.dumps(result.structured_content, indent=2) + "\n")
    return True


def run_async(coroutine: Any) -> Any:
    """Run a command's coroutine; the client's errors become one line."""
    import anyio

    from mcpdi.lowlevel import MCPError

    async def main() -> Any:
        try:
            return await coroutine
        except MCPError as error:
            msg = f"the server answered with error {error.code}: {error.message}"
            raise CommandError(msg) from None
        except OSError as error:
            msg = f"cannot reach the server: {error}"
            raise CommandError(msg) from None

    return anyio.run(main)
