"""Prompts of an `MCPServer`: resolvers work here as on tools, and stay hidden from the client."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_types import (
    GetPromptRequestParams,
    GetPromptResult,
    Icon,
    InputRequiredResult,
    Prompt,
    PromptArgument,
    PromptMessage,
)
from pydantic import ValidationError

from mcpdi._arguments import ArgumentsModel, ArgumentsPlan, dump_arguments, plan_arguments
from mcpdi._context import Context
from mcpdi._deferred import Deferred
from mcpdi._options import PromptOptions
from mcpdi._output._convert import to_content
from mcpdi._registration import (
    compile_mcp_plan,
    fields_as_typed,
    function_name,
    published_description,
    published_name,
)
from mcpdi._rounds import CallTarget, Pending, run_request
from mcpdi._state._security import RequestStateSecurity
from mcpdi._tools._compiled import failure_text
from mcpdi.engine import Plan
from mcpdi.lowlevel._errors import INTERNAL_ERROR, INVALID_PARAMS, MCPError

__all__ = ("RegisteredPrompt", "compile_prompt", "get_prompt")


@dataclass(frozen=True, slots=True)
class RegisteredPrompt:
    """A prompt as registration decided it: its plan, argument model and published entry.

    The model and the `Prompt` object may be left for the first list or get (`plan_arguments`).
    """

    name: str
    plan: Plan
    arguments: ArgumentsPlan
    deferred_wire: Deferred[Prompt]
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)  # for overrides

    @property
    def arguments_model(self) -> type[ArgumentsModel]:
        return self.arguments.model()

    @property
    def wire(self) -> Prompt:
        """What prompts/list publishes."""
        return self.deferred_wire.get()


def _prompt_wire(
    name: str, title: str | None, description: str, arguments: ArgumentsPlan, icons: list[Icon] | None
) -> Prompt:
    schema = arguments.schema()
    required = set(schema.get("required", ()))
    return Prompt(
        name=name,
        title=title,
        description=description,
        arguments=[
            PromptArgument(name=key, description=prop.get("description"), required=key in required)
            for key, prop in schema.get("properties", {}).items()
        ],
        icons=icons,
    )


def compile_prompt(
    fn: Callable[..., Any],
    options: PromptOptions,
    localns: Mapping[str, Any] | None,
    *,
    validate_resolvers: bool = False,
) -> RegisteredPrompt:
    """Compile `fn` into a prompt; resolved and Context parameters are not prompt arguments."""
    fn_name = function_name(fn)
    title, icons = options.title, options.icons
    prompt_name = published_name(fn, options.name, "prompt")
    plan = compile_mcp_plan(fn, prompt_name, localns, validate_resolvers=validate_resolvers)
    arguments = plan_arguments(
        f"{fn_name}Arguments", plan.arguments, owner=prompt_name, location=plan.location
    )
    doc = published_description(fn, options.description)
    wire = Deferred(_prompt_wire, prompt_name, title, doc, arguments, icons)
    if not fields_as_typed(icons, (prompt_name, str), (title, str), (doc, str)):
        wire.get()  # what a user could get wrong is refused at registration
    return RegisteredPrompt(prompt_name, plan, arguments, wire, localns)


def _to_messages(value: Any) -> list[PromptMessage]:
    """A prompt function's result as messages: text and blocks become user messages."""
    from mcpdi._messages import Message  # only rendering needs it, not a start

    items: list[Any] = list(value) if isinstance(value, list | tuple) else [value]  # pyright: ignore[reportUnknownArgumentType]
    messages: list[PromptMessage] = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(item)
        elif isinstance(item, Message):
            messages.append(item.to_prompt_message())
        elif isinstance(item, Mapping):
            messages.append(PromptMessage.model_validate(item))
        else:
            messages.extend(PromptMessage(role="user", content=block) for block in to_content(item))
    return messages


async def get_prompt(
    prompt: RegisteredPrompt,
    params: GetPromptRequestParams,
    ctx: Context[Any],
    *,
    security: RequestStateSecurity,
    audience: str,
) -> GetPromptResult | InputRequiredResult:
    """Validate the arguments, run the resolvers and the function, in either era."""
    raw = params.arguments or {}
    missing = sorted(arg.name for arg in prompt.wire.arguments or () if arg.required and arg.name not in raw)
    if missing:
        msg = f"Missing required arguments for prompt {prompt.name!r}: {', '.join(missing)}"
        raise MCPError(INVALID_PARAMS, msg)
    try:
        validated = prompt.arguments_model.model_validate(raw)
    except ValidationError as error:
        msg = f"Invalid arguments for prompt {prompt.name!r}: {error}"
        raise MCPError(INVALID_PARAMS, msg) from None
    target = CallTarget("prompts/get", prompt.name, params.arguments, audience)
    try:
        value = await run_request(
            prompt.plan, dump_arguments(validated), ctx, target=target, security=security, params=params
        )
        if isinstance(value, Pending):
            return value.result
        return GetPromptResult(description=prompt.wire.description, messages=_to_messages(value))
    except MCPError:
        raise
    except Exception as error:
        raise MCPError(INTERNAL_ERROR, failure_text(error, f"Error rendering prompt {prompt.name}")) from None
