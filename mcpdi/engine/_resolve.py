"""The `Resolve` marker: `Annotated[T, Resolve(fn)]` says "fn fills this parameter"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Resolve:
    """Fill the annotated parameter with `fn`'s result.

    `inline=True` calls a sync `fn` on the event-loop thread instead of a worker thread
    (for cheap, non-blocking resolvers); it has no effect on async resolvers. Sync resolvers
    that follow each other in run order share one worker-thread call, and a sync root after
    them joins it; an async or inline resolver between them starts a new one.
    `validate=True` asks the host to check each value `fn` returns against the parameter's
    annotation before handing it over (`Edge.validate`; the engine itself checks nothing).

    `scope` says how long a value lives: `"round"` (the default) computes it in every round of
    a call; `"app"` computes it once, on first use, and shares it with every call until the
    host closes its `AppScope` (it may depend only on other app-scoped resolvers); `"call"`
    computes it once per call and hands it to the host with the round's questions, so that a
    later round of the same call gets it back instead of computing it again.

    `concurrent=True` (async resolvers of the default scope) lets the resolver run at the same
    time as the other concurrent resolvers of the round that do not depend on it or on each
    other; with several failures the first in run order is raised and the others noted on it.
    """

    fn: Callable[..., Any]
    inline: bool = field(default=False, kw_only=True)
    validate: bool = field(default=False, kw_only=True)
    scope: Literal["round", "call", "app"] = field(default="round", kw_only=True)
    concurrent: bool = field(default=False, kw_only=True)
