"""The official SDK's `Client(...)` keywords in mcpdi's terms, and the `completion/complete` params."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

__all__ = ("DEFAULT_MAX_ROUNDS", "completion_params", "sdk_client_options")

DEFAULT_MAX_ROUNDS = 10


def sdk_client_options(
    max_rounds: int | None,
    input_required_max_rounds: int | None,
    cache: object | None = None,
    prior_discover: object | None = None,
) -> int:
    """The round cap to use; `TypeError` for what mcpdi's client does not take, naming the alternative."""
    if cache is not None:
        msg = (
            "Client(cache=...) is not taken by mcpdi's client (no response cache); "
            "pass cache=None or leave it out"
        )
        raise TypeError(msg)
    if prior_discover is not None:
        msg = (
            "Client(prior_discover=...) is not taken by mcpdi's client, which asks server/discover "
            "itself on connect (mode='auto' or a modern version); leave it out"
        )
        raise TypeError(msg)
    if max_rounds is not None and input_required_max_rounds is not None:
        msg = "Client takes max_rounds= or input_required_max_rounds= (the official SDK's name), not both"
        raise TypeError(msg)
    chosen = max_rounds if max_rounds is not None else input_required_max_rounds
    return DEFAULT_MAX_ROUNDS if chosen is None else chosen


def completion_params(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: Mapping[str, str],
    context_arguments: Mapping[str, str] | None,
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "ref": ref.model_dump(by_alias=True, mode="json", exclude_none=True),
        "argument": dict(argument),
    }
    if context_arguments is not None:
        params["context"] = {"arguments": dict(context_arguments)}
    return params
