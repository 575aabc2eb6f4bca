"""mcpdi.engine: compiles a function and its resolvers into a plan; no MCP, no I/O, any RPC code."""

import typing as _typing

from mcpdi.engine._cleanup import RoundOutcome as RoundOutcome
from mcpdi.engine._compile import compile_plan as compile_plan
from mcpdi.engine._errors import CleanupError as CleanupError
from mcpdi.engine._errors import InvalidSignature as InvalidSignature
from mcpdi.engine._errors import MissingArgument as MissingArgument
from mcpdi.engine._errors import ResolverError as ResolverError
from mcpdi.engine._errors import UnansweredQuestion as UnansweredQuestion
from mcpdi.engine._plan import Adapter as Adapter
from mcpdi.engine._plan import Argument as Argument
from mcpdi.engine._plan import ArgumentBinding as ArgumentBinding
from mcpdi.engine._plan import AskCallback as AskCallback
from mcpdi.engine._plan import Binding as Binding
from mcpdi.engine._plan import ContextBinding as ContextBinding
from mcpdi.engine._plan import Edge as Edge
from mcpdi.engine._plan import Plan as Plan
from mcpdi.engine._plan import ResolvedBinding as ResolvedBinding
from mcpdi.engine._plan import RunFunction as RunFunction
from mcpdi.engine._plan import Step as Step
from mcpdi.engine._question import Answer as Answer
from mcpdi.engine._question import Asked as Asked
from mcpdi.engine._question import NeedsInput as NeedsInput
from mcpdi.engine._question import Question as Question
from mcpdi.engine._question import digest_of as digest_of
from mcpdi.engine._resolve import Resolve as Resolve
from mcpdi.engine._scopes import AppScope as AppScope

if _typing.TYPE_CHECKING:
    from mcpdi.engine._explain import Explanation as Explanation
    from mcpdi.engine._explain import Input as Input
    from mcpdi.engine._explain import Node as Node
    from mcpdi.engine._explain import explain as explain
    from mcpdi.engine._explain import explanation_json as explanation_json
    from mcpdi.engine._explain import explanation_record as explanation_record
    from mcpdi.engine._explain import render_mermaid as render_mermaid
    from mcpdi.engine._explain import render_text as render_text

# Explaining a plan is for `mcpdi explain` and `max_rounds`, not for serving: loaded on first use.
_EXPLAINING = frozenset(
    {
        "Explanation",
        "Input",
        "Node",
        "explain",
        "explanation_json",
        "explanation_record",
        "render_mermaid",
        "render_text",
    }
)


def __getattr__(name: str) -> _typing.Any:
    if name not in _EXPLAINING:
        msg = f"module 'mcpdi.engine' has no attribute {name!r}"
        raise AttributeError(msg)
    from mcpdi.engine import _explain

    value = getattr(_explain, name)
    globals()[name] = value
    return value


__all__ = (
    "Adapter",
    "Answer",
    "AppScope",
    "Argument",
    "ArgumentBinding",
    "AskCallback",
    "Asked",
    "Binding",
    "CleanupError",
    "ContextBinding",
    "Edge",
    "Explanation",
    "Input",
    "InvalidSignature",
    "MissingArgument",
    "NeedsInput",
    "Node",
    "Plan",
    "Question",
    "Resolve",
    "ResolvedBinding",
    "ResolverError",
    "RoundOutcome",
    "RunFunction",
    "Step",
    "UnansweredQuestion",
    "compile_plan",
    "digest_of",
    "explain",
    "explanation_json",
    "explanation_record",
    "render_mermaid",
    "render_text",
)
