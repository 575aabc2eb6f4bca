"""mcpdi.engine: compiles a function and its resolvers into a plan; no MCP, no I/O, any RPC code."""

from ._compile import compile_plan as compile_plan
from ._errors import InvalidSignature as InvalidSignature
from ._errors import MissingArgument as MissingArgument
from ._errors import ResolverError as ResolverError
from ._errors import UnansweredQuestion as UnansweredQuestion
from ._plan import Adapter as Adapter
from ._plan import Argument as Argument
from ._plan import AskCallback as AskCallback
from ._plan import Binding as Binding
from ._plan import Edge as Edge
from ._plan import Plan as Plan
from ._plan import RunFunction as RunFunction
from ._plan import Step as Step
from ._question import Answer as Answer
from ._question import Asked as Asked
from ._question import NeedsInput as NeedsInput
from ._question import Question as Question
from ._question import digest_of as digest_of
from ._resolve import Resolve as Resolve

__all__ = (
    "Adapter",
    "Answer",
    "Argument",
    "AskCallback",
    "Asked",
    "Binding",
    "Edge",
    "InvalidSignature",
    "MissingArgument",
    "NeedsInput",
    "Plan",
    "Question",
    "Resolve",
    "ResolverError",
    "RunFunction",
    "Step",
    "UnansweredQuestion",
    "compile_plan",
    "digest_of",
)
