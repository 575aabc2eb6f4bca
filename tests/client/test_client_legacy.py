"""Handshake-era server-to-client traffic: requests go to the callbacks, notifications to the handlers."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from client_fakes import ScriptedChannel, initialized, scripted_client

from mcpdi import MCPError
from mcpdi_transport._client._callbacks import RequestContext

pytestmark = pytest.mark.anyio

DONE = {"content": [{"type": "text", "text": "done"}]}


def legacy_server(*questions: tuple[str, dict[str, Any] | None]) -> tuple[ScriptedChannel, list[Any]]:
    """tools/call asks each question through the client's inbound side before answering."""
    answers: list[Any] = []
    channel = ScriptedChannel({"initialize": initialized})

    async def call(params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        assert channel.inbound is not None
        for number, (method, question) in enumerate(questions, start=1):
            try:
                answers.append(await channel.inbound.on_request(number, method, question))
            except MCPError as exc:
                answers.append(exc)
        await channel.inbound.on_notification(
            "notifications/progress", {"progressToken": 1, "progress": 1, "total": 2}
        )
        await channel.inbound.on_notification("notifications/message", {"level": "info", "data": "half way"})
        await channel.inbound.on_notification("vendor/unknown", {"x": 1})
        return DONE

    channel.handlers["tools/call"] = call
    return channel, answers


async def test_server_requests_are_answered_by_the_callbacks() -> None:
    seen: list[RequestContext] = []

    async def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(context)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    question: dict[str, Any] = {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"k": "v"},
    }
    channel, answers = legacy_server(("elicitation/create", question), ("ping", None))
    async with scripted_client(channel, mode="legacy", elicitation_callback=elicit) as client:
        result = await client.call_tool("greet")
    assert result.content == [types.TextContent(type="text", text="done")]
    assert answers == [{"action": "accept", "content": {"name": "Ada"}}, {}]
    assert seen == [
        RequestContext(request_id=1, era="legacy", protocol_version="2025-11-25", meta={"k": "v"})
    ]
    assert channel.sent[0].params["capabilities"] == {"elicitation": {"form": {}}}


async def test_a_request_without_a_callback_or_answered_with_an_error_is_an_error_response() -> None:
    async def refuse(context: RequestContext) -> types.ErrorData:
        return types.ErrorData(code=-32001, message="no roots today")

    channel, answers = legacy_server(
        ("sampling/createMessage", {"messages": [], "maxTokens": 1}), ("roots/list", None)
    )
    async with scripted_client(channel, mode="legacy", list_roots_callback=refuse) as client:
        await client.call_tool("greet")
    assert [(error.code, error.message) for error in answers] == [
        (-32601, "This client cannot answer 'sampling/createMessage': it was not given a callback for it"),
        (-32001, "no roots today"),
    ]


async def test_a_malformed_question_is_an_invalid_params_error() -> None:
    async def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        raise AssertionError("not called")

    channel, answers = legacy_server(("elicitation/create", {"requestedSchema": 3}))
    async with scripted_client(channel, mode="legacy", elicitation_callback=elicit) as client:
        await client.call_tool("greet")
    assert answers[0].code == -32602
    assert answers[0].message.startswith("The server sent malformed 'elicitation/create' params:")


async def test_notifications_reach_the_message_handler_and_log_messages_the_logging_callback() -> None:
    notifications: list[types.ServerNotification] = []
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_message(notification: types.ServerNotification) -> None:
        notifications.append(notification)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    channel, _ = legacy_server()
    options: dict[str, Any] = {"message_handler": on_message, "logging_callback": on_log}
    async with scripted_client(channel, mode="legacy", **options) as client:
        await client.call_tool("slow")
    assert [n.method for n in notifications] == ["notifications/progress", "notifications/message"]
    assert [(log.level, log.data) for log in logs] == [("info", "half way")]


async def test_a_callback_that_raises_is_answered_as_an_internal_error_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(context: RequestContext) -> types.ListRootsResult:
        raise ValueError("disk on fire")

    async def noisy(notification: types.ServerNotification) -> None:
        raise ValueError("handler on fire")

    channel, answers = legacy_server(("roots/list", None))
    async with scripted_client(
        channel, mode="legacy", list_roots_callback=broken, message_handler=noisy
    ) as client:
        result = await client.call_tool("greet")
    assert result.content == [types.TextContent(type="text", text="done")]
    assert [(error.code, error.message) for error in answers] == [
        (-32603, "The client failed to answer 'roots/list'")
    ]
    assert "the client's callback for 'roots/list' raised" in caplog.text
    assert "the client's handler for the 'notifications/progress' notification raised" in caplog.text
