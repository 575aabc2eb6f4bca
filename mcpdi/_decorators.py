"""`MCPServer`'s registration methods: `@mcp.tool()`, `@mcp.prompt()`, `@mcp.resource()`, `add_*`, `remove_*`.

Each builds the frozen options record of its kind from its own parameters and hands it, with
the caller's namespace, to the server's `Registry`, which compiles and keeps the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_types import Annotations, CompleteRequestParams, Icon, ToolAnnotations

from mcpdi._completion import CompletionHandler, completion_handler
from mcpdi._options import PromptOptions, ResourceOptions, ToolOptions
from mcpdi._registration import caller_namespace
from mcpdi._sdk_server import prompt_parts

if TYPE_CHECKING:
    from mcpdi._registry import Registry
    from mcpdi._resources._security import ResourceSecurity
    from mcpdi.lowlevel._server import Server

__all__ = ("Registering",)

FnT = TypeVar("FnT", bound=Callable[..., Any])


class Registering:
    """The registration half of `MCPServer` (which sets these attributes)."""

    __slots__ = ()

    _registry: Registry
    _server: Server[Any]
    resource_security: ResourceSecurity

    def tool(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        max_rounds: int | None = None,
        *,
        required_scopes: Sequence[str] = (),
    ) -> Callable[[FnT], FnT]:
        """Register a function as a tool: `@mcp.tool()` (note the parentheses).

        `max_rounds=n` refuses (with `InvalidSignature`) a resolver graph that could ask the
        client in more than `n` dependent rounds. `required_scopes`: with bearer auth, a
        caller whose token lacks one of them gets a -32003 error naming the missing scopes
        instead of the tool.
        """
        if callable(name):
            msg = "@mcp.tool is a decorator factory; write @mcp.tool() with parentheses"
            raise TypeError(msg)
        options = ToolOptions.from_arguments(locals())
        localns = caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._registry.add_tool(fn, options, localns)
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        max_rounds: int | None = None,
    ) -> None:
        """Register `fn` as a tool without the decorator."""
        options = ToolOptions.from_arguments(locals())
        self._registry.add_tool(fn, options, caller_namespace(1))

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; an unknown name raises `ToolError`."""
        self._registry.remove_tool(name)

    def prompt(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> Callable[[FnT], FnT]:
        """Register a function as a prompt: `@mcp.prompt()`."""
        if callable(name):
            msg = "@mcp.prompt is a decorator factory; write @mcp.prompt() with parentheses"
            raise TypeError(msg)
        options = PromptOptions.from_arguments(locals())
        localns = caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._registry.add_prompt(fn, options, localns)
            return fn

        return register

    def add_prompt(
        self,
        prompt: Any,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> None:
        """Register a prompt without the decorator: a function, or the SDK's `Prompt` object."""
        overrides = {"name": name, "title": title, "description": description, "icons": icons}
        fn, keywords = prompt_parts(prompt, overrides)
        self._registry.add_prompt(fn, PromptOptions(**keywords), caller_namespace(1))

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; an unknown name raises `ValueError`."""
        self._registry.remove_prompt(name)

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        security: ResourceSecurity | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[FnT], FnT]:
        """Register a function as a resource (`"res://x"`) or a template (`"res://{x}"`).

        A template's variables pass `security` (by default the server's `resource_security`:
        no `..` segments, absolute paths or NUL bytes) before the function sees them.
        """
        if callable(uri):
            msg = "@mcp.resource takes the URI: write @mcp.resource('scheme://path')"
            raise TypeError(msg)
        options = ResourceOptions.from_arguments(locals())
        localns = caller_namespace(1)

        def register(fn: FnT) -> FnT:
            self._registry.add_resource(fn, uri, options, localns, default_security=self.resource_security)
            return fn

        return register

    def add_resource(
        self,
        resource: Any,
        uri: str | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Register a resource without the decorator.

        `resource` is a function (then `uri` is required), or an object with `uri`, `name`
        and an async `read()` returning str or bytes (the reference SDK's resource classes
        qualify); its `title`, `description`, `mime_type`, `icons`, `annotations` and
        `meta` are published when present.
        """
        from mcpdi._resources._objects import registrable  # the reference SDK's resource objects

        fn, uri, options = registrable(resource, uri, ResourceOptions.from_arguments(locals()))
        self._registry.add_resource(
            fn, uri, options, caller_namespace(1), default_security=self.resource_security
        )

    def completion(self) -> Callable[[CompletionHandler], CompletionHandler]:
        """Register the server's completion handler: `async def complete(ref, argument, context)`.

        It returns a `Completion` (or None for no suggestions) for a prompt argument or a
        resource template variable; registering one advertises the `completions` capability.
        """

        def register(fn: CompletionHandler) -> CompletionHandler:
            self._server.add_request_handler(
                "completion/complete", CompleteRequestParams, completion_handler(fn)
            )
            return fn

        return register
