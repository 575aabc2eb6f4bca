"""The engine's exceptions: registration mistakes versus failures while a call runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpdi.engine._plan import Step


class InvalidSignature(Exception):
    """A function cannot be compiled into a plan; raised at registration, never while a call runs.

    `function` is the callable at fault, `parameter` the parameter's name (or None), and
    `cycle` the steps of a dependency cycle as `module:qualname` strings (empty otherwise).
    """

    def __init__(
        self,
        message: str,
        *,
        function: Any = None,
        parameter: str | None = None,
        cycle: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.function = function
        self.parameter = parameter
        self.cycle = cycle


class ResolverError(Exception):
    """A resolver raised; the round stopped before the root ran. The original is `__cause__`."""

    def __init__(self, message: str, *, step: Step, parameter: str) -> None:
        super().__init__(message)
        self.step = step
        self.parameter = parameter


class CleanupError(ResolverError):
    """The code after a cleanup resolver's `yield` (or its `__exit__`) raised in a round that had
    otherwise succeeded. The first failure is `__cause__`; `errors` holds every failure."""

    def __init__(self, message: str, *, step: Step, parameter: str, errors: tuple[Exception, ...]) -> None:
        super().__init__(message, step=step, parameter=parameter)
        self.errors = errors


class MissingArgument(KeyError):
    """A call lacked a value the plan needs: a call argument by name, or a context value by type."""

    def __init__(self, message: str, *, name: str | type) -> None:
        super().__init__(message)
        self.message = message
        self.name = name

    def __str__(self) -> str:
        return self.message


class UnansweredQuestion(Exception):
    """`Plan.call` met questions it has no way to ask; `questions` are the ones asked this round."""

    def __init__(self, message: str, *, questions: tuple[Any, ...]) -> None:
        super().__init__(message)
        self.questions = questions


for _public in (InvalidSignature, ResolverError, CleanupError, MissingArgument, UnansweredQuestion):
    _public.__module__ = "mcpdi.engine"  # tracebacks name the public import path
