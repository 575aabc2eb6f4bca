"""The fixtures the official MCP conformance suite calls, served over Streamable HTTP.

    python examples/conformance_server.py --port 3001     # http://127.0.0.1:3001/mcp

Tool, prompt and resource names are the ones the suite (`@modelcontextprotocol/conformance`)
asks for by name. The fixtures do what their names say: elicitation, sampling and roots are
asked through resolvers (`Resolve` + `Elicit`/`Sample`), which mcpdi carries as a request
mid-call in the handshake era and as an `InputRequiredResult` in 2026-07-28; the
`test_input_required_result_*` tools drive their rounds themselves, because the suite fixes
the keys of their input requests and the text of their state.
"""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field, WithJsonSchema

from mcpdi import (
    Context,
    Elicit,
    ElicitationResult,
    Header,
    MCPError,
    MCPServer,
    Resolve,
    Sample,
    ServerRequestContext,
    ToolError,
)
from mcpdi import types as t

# A 1x1 PNG and a minimal WAV file.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
MISSING_CAPABILITY = -32021
INVALID_PARAMS = -32602

mcp = MCPServer(
    "mcpdi-conformance",
    instructions="Fixtures for the official MCP conformance suite.",
    version="0.1.0",
)

# -- content ------------------------------------------------------------------------------


@mcp.tool()
def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


@mcp.tool()
def test_image_content() -> list[t.ImageContent]:
    """Returns one PNG image block."""
    return [t.ImageContent(type="image", data=PNG, mime_type="image/png")]


@mcp.tool()
def test_audio_content() -> list[t.AudioContent]:
    """Returns one WAV audio block."""
    return [t.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@mcp.tool()
def test_embedded_resource() -> list[t.EmbeddedResource]:
    """Returns one embedded text resource."""
    resource = t.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return [t.EmbeddedResource(type="resource", resource=resource)]


@mcp.tool()
def test_multiple_content_types() -> list[t.TextContent | t.ImageContent | t.EmbeddedResource]:
    """Returns text, an image and an embedded JSON resource, in that order."""
    resource = t.TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text=json.dumps({"test": "data", "value": 123}),
    )
    return [
        t.TextContent(type="text", text="Multiple content types test:"),
        t.ImageContent(type="image", data=PNG, mime_type="image/png"),
        t.EmbeddedResource(type="resource", resource=resource),
    ]


@mcp.tool()
def test_error_handling() -> str:
    """Always fails; the failure is reported as a tool result with isError."""
    raise ToolError("This tool intentionally returns an error for testing")


# -- notifications during a call ----------------------------------------------------------


@mcp.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages, about 50 ms apart."""
    await ctx.info("Tool execution started")
    await anyio.sleep(0.05)
    await ctx.info("Tool processing data")
    await anyio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@mcp.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs one message; it reaches only a client that opted in to log messages."""
    await ctx.info("test_logging_tool ran")
    return "Logged one message at level info."


@mcp.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100, about 50 ms apart."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await anyio.sleep(0.05)
    token = ctx.request_context.progress_token
    return f"Progress reported for token {token!r}." if token is not None else "Progress not requested."


@mcp.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes the client's SSE stream mid-call; the rest arrives after it reconnects (SEP-1699)."""
    await ctx.info("Before disconnect")
    # The handshake-era HTTP transport's peer can drop the client's connection to this
    # request's stream while the call goes on; the client resumes with Last-Event-ID.
    close_stream = getattr(ctx.request_context.peer, "close_sse_stream", None)
    if callable(close_stream):
        close_stream()
    await anyio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


# -- asking the client through resolvers ----------------------------------------------------


class UserResponse(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


def describe(answer: ElicitationResult[Any]) -> str:
    """The action and, when accepted, the content as JSON: what the suite reads from the text."""
    content = answer.data.model_dump_json() if answer.action == "accept" else "{}"
    return f"action={answer.action}, content={content}"


def ask_for_user(message: str) -> Elicit[UserResponse]:
    return Elicit(message, UserResponse)


@mcp.tool()
async def test_elicitation(
    message: str,
    answer: Annotated[ElicitationResult[UserResponse], Resolve(ask_for_user)],
) -> str:
    """Asks the person for a username and an email address with the given message."""
    return f"User response: {describe(answer)}"


class UserDefaults(BaseModel):
    """Every primitive type with a default (SEP-1034)."""

    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field(default="active", description="User status")
    verified: bool = Field(default=True, description="Verification status")


def ask_with_defaults() -> Elicit[UserDefaults]:
    return Elicit("Please provide user information", UserDefaults)


@mcp.tool()
async def test_elicitation_sep1034_defaults(
    answer: Annotated[ElicitationResult[UserDefaults], Resolve(ask_with_defaults)],
) -> str:
    """Asks with a form whose fields all have defaults."""
    return f"Elicitation completed: {describe(answer)}"


Titled = Literal["value1", "value2", "value3"]
TITLED_CHOICES = [
    {"const": "value1", "title": "First Option"},
    {"const": "value2", "title": "Second Option"},
    {"const": "value3", "title": "Third Option"},
]


class EnumChoices(BaseModel):
    """The five enum shapes of SEP-1330."""

    untitledSingle: Literal["option1", "option2", "option3"] = Field(description="Untitled single-select")
    titledSingle: Annotated[
        Titled,
        WithJsonSchema({"type": "string", "description": "Titled single-select", "oneOf": TITLED_CHOICES}),
    ]
    legacyEnum: Annotated[
        Literal["opt1", "opt2", "opt3"],
        WithJsonSchema(
            {
                "type": "string",
                "description": "Legacy titled enum",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
                "default": "opt1",
            }
        ),
    ] = "opt1"
    untitledMulti: list[Literal["option1", "option2", "option3"]] = Field(description="Untitled multi-select")
    titledMulti: Annotated[
        list[Titled],
        WithJsonSchema(
            {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": [{**c, "title": c["title"].replace("Option", "Choice")} for c in TITLED_CHOICES]
                },
            }
        ),
    ]


def ask_for_choices() -> Elicit[EnumChoices]:
    return Elicit("Please select values using different enum schema types", EnumChoices)


@mcp.tool()
async def test_elicitation_sep1330_enums(
    answer: Annotated[ElicitationResult[EnumChoices], Resolve(ask_for_choices)],
) -> str:
    """Asks with a form using every enum shape of SEP-1330."""
    return f"Elicitation completed: {describe(answer)}"


class Name(BaseModel):
    name: str


def ask_for_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
async def test_streaming_elicitation(person: Annotated[Name, Resolve(ask_for_name)]) -> str:
    """Asks the person's name: a request mid-call (handshake era) or an InputRequiredResult."""
    return f"Hello, {person.name}!"


def ask_the_model(prompt: str) -> Sample:
    message = t.SamplingMessage(role="user", content=t.TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=100)


@mcp.tool()
async def test_sampling(prompt: str, reply: Annotated[t.CreateMessageResult, Resolve(ask_the_model)]) -> str:
    """Sends the prompt to the client's model and returns its answer."""
    text = reply.content.text if isinstance(reply.content, t.TextContent) else f"<{reply.content.type}>"
    return f"LLM response: {text}"


@mcp.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability and refuses the call without it."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise MCPError(
            MISSING_CAPABILITY,
            "test_missing_capability needs the client's 'sampling' capability",
            {"requiredCapabilities": {"sampling": {}}},
        )
    return "The client declared sampling."


# -- 2026-07-28 rounds driven by the tool body -------------------------------------------------


def form(message: str, field: str, kind: str = "string") -> t.ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return t.ElicitRequest(params=t.ElicitRequestFormParams(message=message, requested_schema=schema))


def sampling(text: str, max_tokens: int) -> t.CreateMessageRequest:
    message = t.SamplingMessage(role="user", content=t.TextContent(type="text", text=text))
    return t.CreateMessageRequest(
        params=t.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def accepted(responses: Mapping[str, Any] | None, key: str, field: str) -> Any:
    """The value of `field` in an accepted elicitation answer under `key`, else None."""
    answer = (responses or {}).get(key)
    if isinstance(answer, t.ElicitResult) and answer.action == "accept" and answer.content:
        return answer.content.get(field)
    return None


def sampled_text(responses: Mapping[str, Any] | None, key: str) -> str | None:
    answer = (responses or {}).get(key)
    if isinstance(answer, t.CreateMessageResult) and isinstance(answer.content, t.TextContent):
        return answer.content.text
    return None


def roots(responses: Mapping[str, Any] | None, key: str) -> list[t.Root] | None:
    answer = (responses or {}).get(key)
    return list(answer.roots) if isinstance(answer, t.ListRootsResult) else None


@mcp.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str | t.InputRequiredResult:
    """Asks for a name under the key user_name, then greets; asks again until it has one."""
    name = accepted(ctx.input_responses, "user_name", "name")
    if isinstance(name, str):
        return f"Hello, {name}!"
    return t.InputRequiredResult(input_requests={"user_name": form("What is your name?", "name")})


@mcp.tool()
async def test_input_required_result_sampling(ctx: Context) -> str | t.InputRequiredResult:
    """Asks the client's model for the capital of France under the key capital_question."""
    text = sampled_text(ctx.input_responses, "capital_question")
    if text is not None:
        return f"The model answered: {text}"
    question = sampling("What is the capital of France?", 100)
    return t.InputRequiredResult(input_requests={"capital_question": question})


@mcp.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str | t.InputRequiredResult:
    """Asks for the client's roots under the key client_roots and lists them."""
    found = roots(ctx.input_responses, "client_roots")
    if found is not None:
        listed = ", ".join(f"{root.name or '-'} ({root.uri})" for root in found) or "none"
        return f"The client has {len(found)} root(s): {listed}"
    return t.InputRequiredResult(input_requests={"client_roots": t.ListRootsRequest()})


@mcp.tool()
async def test_input_required_result_request_state(ctx: Context) -> str | t.InputRequiredResult:
    """Hands out a state with the question and completes only when it comes back unchanged."""
    state = json.loads(ctx.request_state) if ctx.request_state else None
    confirmed = accepted(ctx.input_responses, "confirm", "ok")
    if state == {"asked": "confirm"} and confirmed is not None:
        return f"state-ok: the state came back and the answer was ok={confirmed}"
    question = form("Please confirm", "ok", "boolean")
    return t.InputRequiredResult(
        input_requests={"confirm": question}, request_state=json.dumps({"asked": "confirm"})
    )


@mcp.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str | t.InputRequiredResult:
    """Asks for a name, a sampled greeting and the roots in one round; re-asks what is missing."""
    responses = ctx.input_responses
    name = accepted(responses, "user_name", "name")
    greeting = sampled_text(responses, "greeting")
    found = roots(responses, "client_roots")
    if isinstance(name, str) and greeting is not None and found is not None:
        return f"{greeting} {name}; {len(found)} root(s)."
    wanted: dict[str, t.InputRequest] = {}
    if not isinstance(name, str):
        wanted["user_name"] = form("What is your name?", "name")
    if greeting is None:
        wanted["greeting"] = sampling("Generate a greeting", 50)
    if found is None:
        wanted["client_roots"] = t.ListRootsRequest()
    return t.InputRequiredResult(input_requests=wanted, request_state=json.dumps({"round": "inputs"}))


@mcp.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str | t.InputRequiredResult:
    """Three rounds: a name, then a favourite colour, then the answer; the state grows each round."""
    state: dict[str, Any] = json.loads(ctx.request_state) if ctx.request_state else {"round": 1}
    responses = ctx.input_responses
    if state.get("round") == 2:
        color = accepted(responses, "step2", "color")
        if isinstance(color, str):
            return f"{state['name']} likes {color}."
        question = form("Step 2: What is your favorite color?", "color")
        return t.InputRequiredResult(input_requests={"step2": question}, request_state=json.dumps(state))
    name = accepted(responses, "step1", "name")
    if isinstance(name, str):
        question = form("Step 2: What is your favorite color?", "color")
        next_state = {"round": 2, "name": name}
        return t.InputRequiredResult(input_requests={"step2": question}, request_state=json.dumps(next_state))
    question = form("Step 1: What is your name?", "name")
    return t.InputRequiredResult(input_requests={"step1": question}, request_state=json.dumps({"round": 1}))


@mcp.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str | t.InputRequiredResult:
    """Hands out a state; mcpdi seals it, so a changed state is refused before this body runs."""
    confirmed = accepted(ctx.input_responses, "confirm", "ok")
    if ctx.request_state == "awaiting-confirmation" and confirmed is not None:
        return "state-ok: the sealed state verified."
    question = form("Please confirm", "ok", "boolean")
    return t.InputRequiredResult(input_requests={"confirm": question}, request_state="awaiting-confirmation")


@mcp.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str | t.InputRequiredResult:
    """Asks only through the capabilities this request declares (sampling and/or elicitation)."""
    capabilities = ctx.client_capabilities
    responses = ctx.input_responses
    wanted: dict[str, t.InputRequest] = {}
    if (
        capabilities is not None
        and capabilities.sampling is not None
        and sampled_text(responses, "sample") is None
    ):
        wanted["sample"] = sampling("Say hello", 50)
    if (
        capabilities is not None
        and capabilities.elicitation is not None
        and accepted(responses, "ask", "name") is None
    ):
        wanted["ask"] = form("What is your name?", "name")
    if wanted:
        return t.InputRequiredResult(
            input_requests=wanted, request_state=json.dumps({"round": "capabilities"})
        )
    return "Nothing left to ask through the declared capabilities."


@mcp.prompt()
async def test_input_required_result_prompt(ctx: Context) -> list[t.PromptMessage] | t.InputRequiredResult:
    """A prompt that asks which context to use before it renders."""
    context = accepted(ctx.input_responses, "user_context", "context")
    if isinstance(context, str):
        text = f"Use the following context: {context}"
        return [t.PromptMessage(role="user", content=t.TextContent(type="text", text=text))]
    question = form("What context should the prompt use?", "context")
    return t.InputRequiredResult(input_requests={"user_context": question})


# -- header-mirrored arguments and JSON Schema 2020-12 ------------------------------------------


@mcp.tool(name="test_header_echo")
def echo_region(region: Annotated[str, Header("Region")], query: str = "") -> str:
    """Echoes its Region argument, which 2026-07-28 clients mirror as the Mcp-Param-Region header."""
    return f"region={region} query={query}"


class Address(BaseModel):
    street: str | None = None
    city: str | None = None


@mcp.tool(description="Tool with JSON Schema 2020-12 features")
def json_schema_2020_12_tool(
    name: str | None = None,
    address: Address | None = None,
    contactMethod: Literal["phone", "email"] | None = None,  # the suite's argument name
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Checks the conditions its published schema states, which the argument types cannot."""
    if phone is None and email is None:
        raise ToolError("give a phone number or an email address")
    if contactMethod == "phone" and phone is None:
        raise ToolError("contactMethod 'phone' needs a phone number")
    if contactMethod != "phone" and email is None:
        raise ToolError("without contactMethod 'phone' an email address is needed")
    where = f" in {address.city}" if address is not None and address.city else ""
    return f"Contact {name or 'someone'}{where} by {'phone' if contactMethod == 'phone' else 'email'}."


# The schema the suite expects to find unchanged in tools/list (SEP-1613, SEP-2106).
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
PUBLISHED_SCHEMAS = {"json_schema_2020_12_tool": JSON_SCHEMA_2020_12}
list_registered_tools = mcp.server.handler_for("tools/list")


async def list_tools(ctx: ServerRequestContext[Any], params: t.PaginatedRequestParams) -> t.ListToolsResult:
    """tools/list with hand-written schemas for the tools whose schema a signature cannot express."""
    assert list_registered_tools is not None
    listed = t.ListToolsResult.model_validate(await list_registered_tools.handler(ctx, params), by_alias=True)
    tools = [
        tool.model_copy(update={"input_schema": PUBLISHED_SCHEMAS[tool.name]})
        if tool.name in PUBLISHED_SCHEMAS
        else tool
        for tool in listed.tools
    ]
    return listed.model_copy(update={"tools": tools})


mcp.server.add_request_handler("tools/list", t.PaginatedRequestParams, list_tools)


# -- a tool list that changes ----------------------------------------------------------------


def test_dynamic_tool() -> str:
    """Present only while test_trigger_tool_change has added it."""
    return "The dynamic tool is here."


@mcp.tool()
async def test_trigger_tool_change(ctx: Context) -> str:
    """Adds test_dynamic_tool, or removes it if present, and tells a handshake-era client."""
    try:
        mcp.registered_tool("test_dynamic_tool")
    except KeyError:
        mcp.add_tool(test_dynamic_tool)
        change = "added"
    else:
        mcp.remove_tool("test_dynamic_tool")
        change = "removed"
    if ctx.era == "legacy":
        await ctx.request_context.send_notification("notifications/tools/list_changed")
    return f"test_dynamic_tool {change}."


def test_dynamic_prompt() -> str:
    """Present only while test_trigger_prompt_change has added it."""
    return "The dynamic prompt is here."


dynamic_prompt_registered = False


@mcp.tool()
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Adds test_dynamic_prompt (prompts cannot be removed) and tells a handshake-era client."""
    global dynamic_prompt_registered
    change = "was already there"
    if not dynamic_prompt_registered:
        mcp.prompt()(test_dynamic_prompt)
        dynamic_prompt_registered = True
        change = "added"
    if ctx.era == "legacy":
        await ctx.request_context.send_notification("notifications/prompts/list_changed")
    return f"test_dynamic_prompt {change}."


# -- prompts ---------------------------------------------------------------------------------


def user_says(content: t.ContentBlock) -> t.PromptMessage:
    return t.PromptMessage(role="user", content=content)


@mcp.prompt()
def test_simple_prompt() -> list[t.PromptMessage]:
    """A prompt without arguments."""
    return [user_says(t.TextContent(type="text", text="This is a simple prompt for testing."))]


@mcp.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> list[t.PromptMessage]:
    """A prompt with two required arguments."""
    return [
        user_says(t.TextContent(type="text", text=f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))
    ]


@mcp.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[t.PromptMessage]:
    """A prompt that embeds the resource named by its argument."""
    resource = t.TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [
        user_says(t.EmbeddedResource(type="resource", resource=resource)),
        user_says(t.TextContent(type="text", text="Please process the embedded resource above.")),
    ]


@mcp.prompt()
def test_prompt_with_image() -> list[t.PromptMessage]:
    """A prompt with an image."""
    return [
        user_says(t.ImageContent(type="image", data=PNG, mime_type="image/png")),
        user_says(t.TextContent(type="text", text="Please analyze the image above.")),
    ]


# -- resources -------------------------------------------------------------------------------

WATCHED = {"test://watched-resource": "Watched resource content"}


@mcp.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@mcp.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed PNG image."""
    return base64.b64decode(PNG)


@mcp.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:  # the template's variable name
    """JSON data for any id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@mcp.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return WATCHED["test://watched-resource"]


# -- subscriptions and completion (handshake-era methods, on the low-level server) ------------

subscriptions: set[str] = set()


async def subscribe(ctx: ServerRequestContext[Any], params: t.SubscribeRequestParams) -> t.EmptyResult:
    uri = str(params.uri)
    if uri not in WATCHED:
        msg = f"Cannot subscribe to {uri}: only {', '.join(sorted(WATCHED))} can change"
        raise MCPError(INVALID_PARAMS, msg, {"uri": uri})
    subscriptions.add(uri)
    return t.EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: t.UnsubscribeRequestParams) -> t.EmptyResult:
    subscriptions.discard(str(params.uri))
    return t.EmptyResult()


mcp.server.add_request_handler("resources/subscribe", t.SubscribeRequestParams, subscribe)
mcp.server.add_request_handler("resources/unsubscribe", t.UnsubscribeRequestParams, unsubscribe)

SUGGESTIONS: dict[tuple[str, str], list[str]] = {
    ("test_prompt_with_arguments", "arg1"): ["paris", "park", "party", "hello"],
    ("test_prompt_with_arguments", "arg2"): ["world", "word", "work"],
    ("test://template/{id}/data", "id"): ["1", "12", "123", "42"],
}


async def complete(ctx: ServerRequestContext[Any], params: t.CompleteRequestParams) -> t.CompleteResult:
    ref = params.ref
    target = ref.name if isinstance(ref, t.PromptReference) else ref.uri
    candidates = SUGGESTIONS.get((target, params.argument.name), [])
    values = [value for value in candidates if value.startswith(params.argument.value)]
    return t.CompleteResult(completion=t.Completion(values=values, total=len(values), has_more=False))


mcp.server.add_request_handler("completion/complete", t.CompleteRequestParams, complete)


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the conformance fixtures over Streamable HTTP.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    options = parser.parse_args()
    mcp.run("streamable-http", host=options.host, port=options.port)


if __name__ == "__main__":
    main()
