"""An `MCPServer`'s tools, prompts and resources: compiled when added, the first of a name kept."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from mcp_types import ListToolsResult, Prompt, Resource, ResourceTemplate, Tool

from mcpdi._errors import ToolError
from mcpdi._tools._compiled import RegisteredTool, compile_tool
from mcpdi._tools._names import warn_on_invalid_tool_name
from mcpdi.lowlevel._errors import INVALID_PARAMS, MCPError

if TYPE_CHECKING:
    from mcpdi._options import PromptOptions, ResourceOptions, ToolOptions
    from mcpdi._prompts import RegisteredPrompt
    from mcpdi._resources._compiled import RegisteredResource
    from mcpdi._resources._security import ResourceSecurity
    from mcpdi.engine import Plan
    from mcpdi.lowlevel._param_headers import HeaderParam

__all__ = ("Kind", "Registry")

logger = logging.getLogger("mcpdi")

Kind = Literal["tool", "prompt", "resource"]


class Registry:
    """Three dicts by name (resources by URI), and what registration and lookup do with them.

    A second definition of a name is dropped, with a warning unless `warn_on_duplicate` says
    otherwise for its kind, as in the reference SDK.
    """

    __slots__ = (
        "_scope_where",
        "_scopes",
        "_tools_listed",
        "_validate_resolvers",
        "_warn_on_duplicate",
        "prompts",
        "resources",
        "tool_scopes",
        "tools",
    )

    def __init__(self, *, validate_resolvers: bool, warn_on_duplicate: Mapping[Kind, bool]) -> None:
        self._validate_resolvers = validate_resolvers
        self._warn_on_duplicate = dict(warn_on_duplicate)
        self.tools: dict[str, RegisteredTool] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.tool_scopes: dict[str, tuple[str, ...]] = {}
        # resolver: its scope, and where it was first given. Two dicts of strings rather than one of
        # pairs: a pair per resolver would be one more object for the collector while the server lives.
        self._scopes: dict[Callable[..., Any], str] = {}
        self._scope_where: dict[Callable[..., Any], str] = {}
        # tools/list's result in wire form, with the entries it was dumped from
        self._tools_listed: tuple[tuple[RegisteredTool, ...], dict[str, Any]] | None = None

    # -- adding and removing ------------------------------------------------------------

    def add_tool(self, fn: Callable[..., Any], options: ToolOptions, localns: Mapping[str, Any]) -> None:
        tool = compile_tool(fn, options, localns, validate_resolvers=self._validate_resolvers)
        if options.max_rounds is not None:
            from mcpdi._explain import check_max_rounds  # explaining is not a start's business

            check_max_rounds(tool, options.max_rounds, fn)
        warn_on_invalid_tool_name(tool.name)
        self._keep_first(self.tools, "tool", tool.name, tool)
        if options.required_scopes:
            self.tool_scopes[tool.name] = options.required_scopes

    def add_prompt(self, fn: Callable[..., Any], options: PromptOptions, localns: Mapping[str, Any]) -> None:
        from mcpdi._prompts import compile_prompt  # a server of tools alone never loads prompts

        prompt = compile_prompt(fn, options, localns, validate_resolvers=self._validate_resolvers)
        self._keep_first(self.prompts, "prompt", prompt.name, prompt)

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        options: ResourceOptions,
        localns: Mapping[str, Any],
        *,
        default_security: ResourceSecurity,
    ) -> None:
        from mcpdi._resources._compiled import compile_resource  # nor resources

        security = options.security if options.security is not None else default_security
        resource = compile_resource(
            fn, uri, options, localns, security=security, validate_resolvers=self._validate_resolvers
        )
        self._keep_first(self.resources, "resource", resource.uri, resource)

    def _keep_first(self, registry: dict[str, Any], kind: Kind, key: str, entry: object) -> None:
        if key in registry:
            if self._warn_on_duplicate[kind]:
                logger.warning("%s already exists: %s (the first definition is kept)", kind.capitalize(), key)
            return
        registry[key] = entry
        self._note_scopes(f"{kind} {key!r}", cast("Any", entry).plan)

    def _note_scopes(self, where: str, plan: Plan) -> None:
        """Warn of a resolver given two scopes in one server: it would get two lifetimes."""
        for step in plan.steps:
            seen = self._scopes.setdefault(step.fn, step.scope)
            if seen == step.scope:
                self._scope_where.setdefault(step.fn, where)
            else:
                logger.warning(
                    "resolver %s (%s) has scope %r in %s and %r in %s: each gets its own value and "
                    "lifetime; give every Resolve(%s) one scope",
                    step.name,
                    step.location,
                    seen,
                    self._scope_where[step.fn],
                    step.scope,
                    where,
                    step.name,
                )

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is None:
            msg = f"Unknown tool: {name}"
            raise ToolError(msg)

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is None:
            msg = f"Unknown prompt: {name}"
            raise ValueError(msg)

    # -- lookups ------------------------------------------------------------------------

    def tool(self, name: str) -> RegisteredTool:
        """The tool registered as `name`; an unknown name is the client's -32602."""
        tool = self.tools.get(name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        return tool

    def prompt(self, name: str) -> RegisteredPrompt:
        """The prompt registered as `name`; an unknown name is the client's -32602."""
        prompt = self.prompts.get(name)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")
        return prompt

    def tool_input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self.tools.get(name)
        return tool.input_schema if tool is not None else None

    def tool_header_params(self, name: str) -> tuple[HeaderParam, ...] | None:
        tool = self.tools.get(name)
        return tool.header_params if tool is not None else None

    def resources_in_order(self) -> tuple[RegisteredResource, ...]:
        """Fixed URIs first, so a template never shadows a resource registered by its exact URI."""
        return tuple(sorted(self.resources.values(), key=lambda r: r.pattern is not None))

    # -- what the list methods publish --------------------------------------------------

    def tool_list(self) -> list[Tool]:
        return [tool.wire for tool in self.tools.values()]

    def tool_list_in_wire_form(self) -> dict[str, Any]:
        """tools/list's result as its wire form, dumped once while the tools stay the same
        entries: adding, removing or overriding one replaces an entry, so the next list dumps anew."""
        tools = tuple(self.tools.values())
        listed = self._tools_listed
        if (
            listed is None
            or len(listed[0]) != len(tools)
            or any(a is not b for a, b in zip(listed[0], tools, strict=True))
        ):
            result = ListToolsResult(tools=[tool.wire for tool in tools])
            listed = self._tools_listed = (
                tools,
                result.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        return listed[1]

    def prompt_list(self) -> list[Prompt]:
        return [prompt.wire for prompt in self.prompts.values()]

    def resource_list(self) -> list[Resource]:
        return [r.wire for r in self.resources.values() if isinstance(r.wire, Resource)]

    def template_list(self) -> list[ResourceTemplate]:
        return [r.wire for r in self.resources.values() if isinstance(r.wire, ResourceTemplate)]
