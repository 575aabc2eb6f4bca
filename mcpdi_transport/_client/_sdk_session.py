"""`client.session`: the official SDK's `ClientSession` calls, for code that drives rounds by hand.

`client.session.call_tool(name, args, allow_input_required=True)` sends one request and
returns an `InputRequiredResult` as it came; the caller answers its `input_requests` and
sends them back with `input_responses=` and the echoed `request_state=`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import mcp_types as types
from pydantic import BaseModel

from mcpdi.lowlevel import read_input_required
from mcpdi_transport._client._client_session import within_timeout
from mcpdi_transport._client._extensions import UnexpectedClaimedResult

if TYPE_CHECKING:
    from mcpdi_transport._client._callbacks import ProgressCallback
    from mcpdi_transport._client._client import Client

__all__ = ("SessionView", "round_params")

_ResultT = TypeVar("_ResultT", bound=BaseModel)


def round_params(
    base: Mapping[str, Any], input_responses: Mapping[str, Any] | None, request_state: str | None
) -> dict[str, Any]:
    """`base` with a retry's `inputResponses` (models dumped to wire JSON) and `requestState`."""
    params = dict(base)
    if input_responses is not None:
        params["inputResponses"] = {
            key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(value, BaseModel)
            else value
            for key, value in input_responses.items()
        }
    if request_state is not None:
        params["requestState"] = request_state
    return params


class SessionView:
    """The SDK's `ClientSession` methods SDK code calls through `client.session`, on mcpdi's client."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def send_ping(self) -> types.EmptyResult:
        return await self._client.send_ping()

    async def list_tools(self, cursor: str | None = None) -> types.ListToolsResult:
        return await self._client.list_tools(cursor)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressCallback | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        meta: Mapping[str, Any] | None = None,
        allow_input_required: bool = False,
        allow_claimed: bool = False,
    ) -> types.CallToolResult | types.InputRequiredResult | types.Result:
        """One `tools/call`; with `allow_input_required`, an `input_required` answer is returned as is.

        Without it, the client answers the questions with its callbacks, as `client.call_tool` does.
        A result shape one of the client's extensions claims is returned parsed with
        `allow_claimed`, and raises `UnexpectedClaimedResult` without it.
        """
        base: dict[str, Any] = {"name": name}
        if arguments is not None:
            base["arguments"] = dict(arguments)
        if meta is not None:
            base["_meta"] = dict(meta)

        async def send(params: dict[str, Any]) -> dict[str, Any]:
            return await self._client.call_tool_round(name, arguments, params, progress_callback)

        claims = self._client.active_claims()
        raw = await self._one_round(
            send,
            round_params(base, input_responses, request_state),
            allow_input_required,
            read_timeout_seconds,
            f"tools/call {name!r}",
            claims,
        )
        if isinstance(raw, types.InputRequiredResult):
            return raw
        claim = claims.get(raw.get("resultType"))  # pyright: ignore[reportArgumentType]
        if claim is None:
            return _parse(types.CallToolResult, raw)
        claimed = claim.model.model_validate(raw, by_alias=True, by_name=False)
        if not allow_claimed:
            raise UnexpectedClaimedResult(claimed)
        return claimed

    async def send_request(
        self,
        request: BaseModel,
        result_type: type[_ResultT],
        request_read_timeout_seconds: float | None = None,
    ) -> _ResultT:
        """Send a request model (an extension's own method, say) and parse its result as `result_type`."""
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        method: str = wire["method"]
        sending = self._client.send_request(method, wire.get("params"))
        raw = await within_timeout(sending, request_read_timeout_seconds, method)
        return _parse(result_type, raw)

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        allow_input_required: bool = False,
    ) -> types.GetPromptResult | types.InputRequiredResult:
        base: dict[str, Any] = {"name": name}
        if arguments is not None:
            base["arguments"] = dict(arguments)

        async def send(params: dict[str, Any]) -> dict[str, Any]:
            return await self._client.send_request("prompts/get", params)

        params = round_params(base, input_responses, request_state)
        raw = await self._one_round(send, params, allow_input_required, None, f"prompts/get {name!r}")
        if isinstance(raw, types.InputRequiredResult):
            return raw
        return _parse(types.GetPromptResult, raw)

    async def read_resource(
        self,
        uri: str,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        allow_input_required: bool = False,
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        async def send(params: dict[str, Any]) -> dict[str, Any]:
            return await self._client.send_request("resources/read", params)

        params = round_params({"uri": uri}, input_responses, request_state)
        raw = await self._one_round(send, params, allow_input_required, None, f"resources/read {uri!r}")
        if isinstance(raw, types.InputRequiredResult):
            return raw
        return _parse(types.ReadResourceResult, raw)

    async def _one_round(
        self,
        send: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
        params: dict[str, Any],
        allow_input_required: bool,
        read_timeout_seconds: float | None,
        what: str,
        claimed: Collection[str] = (),
    ) -> dict[str, Any] | types.InputRequiredResult:
        """The raw final result, or the `InputRequiredResult` when the caller drives the rounds."""

        async def resend(responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
            return await send(round_params(params, responses, state))

        raw = await within_timeout(send(params), read_timeout_seconds, what.split(" ")[0])
        unclaimed = raw.get("resultType") not in claimed
        if allow_input_required and unclaimed and read_input_required(raw, what) is not None:
            return _parse(types.InputRequiredResult, raw)
        return await self._client.drive(raw, resend, what, claimed)


def _parse(model: type[_ResultT], raw: dict[str, Any]) -> _ResultT:
    return model.model_validate(raw, by_alias=True, by_name=False)
